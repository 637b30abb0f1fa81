"""The 95 % interval of a ratio measured in rounds: the one definition behind every verdict, gate and agreement.

Why rounds: on a shared host the large spread is between processes (a process's repetitions agree with each
other; the next process can be 2x off), so an interval is estimated from the spread between independent
rounds (mpsbench-sweep --rounds: separate processes, the modes interleaved), not from the repetitions inside
one process.

The estimate, for a ratio A / B of two configurations measured in the same R rounds (paired by round: the
MPS gain mps / timeslice, or mps at k against mps at another k):

* d_r = log(A_r / B_r) per round (A_r: the round's median of A); the ratio is exp(mean d), which is the
  ratio of the geometric means of the rounds (rounds.py's figure of a configuration). Where A and B took
  turns within the round, d_r is instead the median of their per-repetition log ratios (turn_pairs.py),
  and the interval says so (``pairing`` "repetition");
* the round-to-round variance of d is moderated (Smyth 2004, limma's "moderated t") because two or three
  rounds alone give a nearly useless variance: s^2 = (d0 s0^2 + (R-1) s_own^2) / (d0 + R - 1), where s0^2 is
  the pooled round-to-round variance of the same kind of ratio over every configuration of the subject
  (kernel and precision; application) and d0 = min(its degrees of freedom, PRIOR_DF); but never below the
  configuration's own s_own^2, so that a configuration noisier than the rest of its subject (a CPU-bound
  one among GPU-bound ones) is not judged by its quieter neighbours;
* the standard error is s / sqrt(R), but never below the noise the repetitions inside the rounds show
  (WITHIN: each side's relative standard error of the median, averaged over its rounds, combined; paired
  by repetition: that of the median of the per-repetition log ratios);
* the interval is exp(mean d +- t(0.975, d0 + R - 1) x SE).

What that gives, simulated (tests/core/test_intervals.py, two rounds, 20 configurations a subject): 98 %
of the intervals hold the true ratio where the configurations are equally noisy (conservative: PRIOR_DF
caps the pool's weight); a quarter of them four times noisier than the rest: 88 % of theirs.

With one round there is no spread between processes to see: the interval is the within-process one
(normal quantile) and says so (``basis`` "one round"); a verdict made of it says so too.  Two unpaired
figures (the same configuration in two runs: the CI gate, the agreement of several runs) are compared with
:func:`difference_interval`, the same construction with the two sides' variances added.
"""

from __future__ import annotations

import functools
import math
from dataclasses import dataclass
from statistics import NormalDist
from typing import Iterable, Sequence

#: The prior's weight, in rounds, at most: the pooled variance counts as this many rounds of evidence.
PRIOR_DF = 4
#: Two-sided coverage of every interval.
COVERAGE = 0.95

# Student's t, 0.975 quantile, for 1..30 degrees of freedom (the standard table).
_T975 = (12.706, 4.303, 3.182, 2.776, 2.571, 2.447, 2.365, 2.306, 2.262, 2.228, 2.201, 2.179, 2.160, 2.145,
         2.131, 2.120, 2.110, 2.101, 2.093, 2.086, 2.080, 2.074, 2.069, 2.064, 2.060, 2.056, 2.052, 2.048,
         2.045, 2.042)


def family_coverage(figures: int, coverage: float = COVERAGE) -> float:
    """The coverage of each of ``figures`` intervals judged together so that all of them hold their true
    values with probability ``coverage`` at least (Bonferroni): 1 - (1 - coverage) / figures. The CI gate
    judges hundreds of figures at once; at 95 % each, two runs of one commit would fail it by chance alone
    (1 - 0.95^336: almost surely)."""
    return 1.0 - (1.0 - coverage) / max(int(figures), 1)


def _incomplete_beta(a: float, b: float, x: float) -> float:
    """The regularized incomplete beta function I_x(a, b) (continued fraction, modified Lentz)."""
    if x <= 0.0:
        return 0.0
    if x >= 1.0:
        return 1.0
    if x > (a + 1.0) / (a + b + 2.0):
        return 1.0 - _incomplete_beta(b, a, 1.0 - x)
    front = math.exp(math.lgamma(a + b) - math.lgamma(a) - math.lgamma(b) + a * math.log(x) + b * math.log1p(-x)) / a
    tiny = 1e-300
    f, c, d = 1.0, 1.0, 0.0
    for i in range(400):
        m = i // 2
        if i == 0:
            term = 1.0
        elif i % 2 == 0:
            term = m * (b - m) * x / ((a + 2 * m - 1) * (a + 2 * m))
        else:
            term = -((a + m) * (a + b + m) * x) / ((a + 2 * m) * (a + 2 * m + 1))
        d = 1.0 + term * d
        d = 1.0 / (d if abs(d) > tiny else tiny)
        c = 1.0 + term / c if abs(c) > tiny else 1.0 + term / tiny
        f *= c * d
        if abs(1.0 - c * d) < 1e-15:
            break
    return front * (f - 1.0)


def t_cdf(t: float, df: float) -> float:
    """P(T <= t) for Student's t with ``df`` degrees of freedom."""
    tail = 0.5 * _incomplete_beta(df / 2.0, 0.5, df / (df + t * t))
    return 1.0 - tail if t >= 0 else tail


@functools.lru_cache(maxsize=256)
def _computed_quantile(df: float, coverage: float) -> float:
    """t_quantile off the table: t_cdf inverted by bisection (a gate asks for one coverage, a few df)."""
    p = 0.5 + coverage / 2
    if math.isinf(df):
        return NormalDist().inv_cdf(p)
    lo, hi = 0.0, 1.0
    while t_cdf(hi, df) < p:
        lo, hi = hi, hi * 2.0
    for _ in range(200):
        mid = (lo + hi) / 2
        lo, hi = (mid, hi) if t_cdf(mid, df) < p else (lo, mid)
        if hi - lo <= 1e-12 * hi:
            break
    return (lo + hi) / 2


def t_quantile(df: float, coverage: float = COVERAGE) -> float:
    """The (1 + coverage) / 2 quantile of Student's t with ``df`` degrees of freedom: the half-width, in
    standard errors, of a two-sided interval of that coverage; the normal one for infinite df. At the 95 %
    every interval of a run uses, the standard table (linear in 1/df between its entries and beyond 30, within
    0.001 of the truth), so that recorded intervals re-derive exactly; at other coverages (the CI gate's,
    family_coverage) computed."""
    if not df > 0:
        raise ValueError(f"degrees of freedom must be positive, got {df}")
    if not 0.0 < coverage < 1.0:
        raise ValueError(f"coverage must lie in (0, 1), got {coverage}")
    if coverage != COVERAGE:
        return _computed_quantile(float(df), float(coverage))
    z = NormalDist().inv_cdf(0.5 + COVERAGE / 2)
    if math.isinf(df):
        return z
    if df <= 1:
        return _T975[0]
    if df >= len(_T975):
        return z + (_T975[-1] - z) * len(_T975) / df
    lo = int(df)
    if lo == df:
        return _T975[lo - 1]
    a, b = _T975[lo - 1], _T975[lo]
    w = (1 / lo - 1 / df) / (1 / lo - 1 / (lo + 1))
    return a + (b - a) * w


@dataclass(frozen=True)
class Pool:
    """The pooled round-to-round variance of one kind of log ratio over a subject's configurations."""

    variance: float
    df: int

    @classmethod
    def of(cls, rounds: Iterable[Sequence[float]]) -> "Pool | None":
        """From the per-round log ratios of each configuration (those with two rounds or more count);
        None when none has two."""
        total, df = 0.0, 0
        for d in rounds:
            if len(d) >= 2:
                m = math.fsum(d) / len(d)
                total += math.fsum((x - m) ** 2 for x in d)
                df += len(d) - 1
        return cls(total / df, df) if df else None

    @property
    def prior_df(self) -> int:
        return min(self.df, PRIOR_DF)


@dataclass(frozen=True)
class Interval:
    """A ratio with its 95 % interval, and what the interval is made of (written to results files as is)."""

    point: float
    low: float
    high: float
    rounds: int                 # rounds with both sides measured (each side's, for an unpaired difference)
    basis: str                  # "rounds", or "one round" (no spread between processes measured)
    df: float                   # of the t quantile (inf for the normal one)
    t: float
    se: float                   # standard error of log(point)
    own_sd: float | None        # this configuration's own round-to-round sd of the log ratio
    pooled_sd: float | None     # the subject's pooled sd (the prior)
    prior_df: int               # its weight
    within_se: float            # the floor: the repetitions' noise inside the rounds
    pairing: str = "round"      # "repetition": each round's log ratio paired repetition by repetition (turns)

    def side(self, threshold: float) -> str:
        """"above" when the whole interval is above ``threshold``, "below" when below, else "straddles"."""
        if self.low > threshold:
            return "above"
        if self.high < threshold:
            return "below"
        return "straddles"

    def contains(self, value: float) -> bool:
        return self.low <= value <= self.high

    @property
    def text(self) -> str:
        """'1.02x-1.16x'."""
        return f"{self.low:.2f}x-{self.high:.2f}x"

    def to_json(self) -> dict:
        def num(x: float | None) -> float | None:
            return None if x is None or not math.isfinite(x) else x
        return {"point": self.point, "low": self.low, "high": self.high, "rounds": self.rounds, "basis": self.basis,
                "df": num(self.df), "t": self.t, "se": self.se, "own_sd": num(self.own_sd),
                "pooled_sd": num(self.pooled_sd), "prior_df": self.prior_df, "within_se": self.within_se,
                # absent where paired by round: what files written before pairing by repetition re-derive to
                **({"pairing": self.pairing} if self.pairing != "round" else {})}


def _make(mean: float, var_rounds: float | None, own_sd: float | None, n: int, pool: Pool | None,
          within_se: float, coverage: float = COVERAGE, pairing: str = "round") -> Interval:
    if var_rounds is None:  # one round: the repetitions alone, and said so
        se, df, basis = within_se, math.inf, "one round"
    else:
        se, basis = max(math.sqrt(var_rounds), within_se), "rounds"
        df = (pool.prior_df if pool else 0) + max(n - 1, 0)
    t = t_quantile(df, coverage) if df > 0 else math.inf
    half = t * se
    return Interval(math.exp(mean), math.exp(mean - half), math.exp(mean + half), n, basis, df, t, se, own_sd,
                    math.sqrt(pool.variance) if pool else None, pool.prior_df if pool else 0, within_se, pairing)


def moderated_variance(d: Sequence[float], pool: Pool | None) -> tuple[float | None, float | None]:
    """(moderated variance of one round's log ratio, own sd); (None, None) when neither the rounds nor the
    pool can give one (a single round, no pool)."""
    n = len(d)
    own = None
    if n >= 2:
        m = math.fsum(d) / n
        own = math.fsum((x - m) ** 2 for x in d) / (n - 1)
    if n < 2 and pool is None:
        return None, None
    d0 = pool.prior_df if pool else 0
    prior = pool.variance if pool else 0.0
    var = max((d0 * prior + (n - 1) * (own or 0.0)) / (d0 + n - 1), own or 0.0)
    return var, (math.sqrt(own) if own is not None else None)


def ratio_interval(d: Sequence[float], pool: Pool | None, within_se: float, pairing: str = "round") -> Interval:
    """The interval of exp(mean d) from per-round log ratios ``d`` of paired rounds (module doc); with one
    round the pool still applies when there is one, else the within-process noise alone. pairing: how each
    d was made ("repetition": the median of a round's per-repetition log ratios, rounds.paired)."""
    if not d:
        raise ValueError("no round measured both sides")
    n = len(d)
    var, own = moderated_variance(d, pool)
    if n < 2:  # one round: a pool of other configurations' rounds does not make this one's spread known
        var = None
    return _make(math.fsum(d) / n, None if var is None else var / n, own, n, pool, within_se, pairing=pairing)


def difference_interval(a: Sequence[float], b: Sequence[float], pool_a: Pool | None, pool_b: Pool | None,
                        within_se: float, coverage: float = COVERAGE) -> Interval:
    """The interval of exp(mean log a - mean log b) for two unpaired series of one figure's rounds (the same
    configuration in two runs): each side's moderated variance over its own rounds, added; the degrees of
    freedom of the smaller side (conservative). coverage: the CI gate's, family_coverage of its figures."""
    la = [math.log(x) for x in a if x is not None and x > 0]
    lb = [math.log(x) for x in b if x is not None and x > 0]
    if not la or not lb:
        raise ValueError("a side has no round")
    mean = math.fsum(la) / len(la) - math.fsum(lb) / len(lb)
    va, sa = moderated_variance(la, pool_a)
    vb, sb = moderated_variance(lb, pool_b)
    if len(la) < 2 or len(lb) < 2 or va is None or vb is None:
        return _make(mean, None, None, min(len(la), len(lb)), None, within_se, coverage)
    se = max(math.sqrt(va / len(la) + vb / len(lb)), within_se)
    df = min((pool_a.prior_df if pool_a else 0) + len(la) - 1, (pool_b.prior_df if pool_b else 0) + len(lb) - 1)
    t = t_quantile(df, coverage)
    pooled = [p for p in (pool_a, pool_b) if p]
    pooled_sd = math.sqrt(sum(p.variance for p in pooled) / len(pooled)) if pooled else None
    own = math.sqrt(((sa or 0) ** 2 + (sb or 0) ** 2) / 2)
    return Interval(math.exp(mean), math.exp(mean - t * se), math.exp(mean + t * se), min(len(la), len(lb)),
                    "rounds", df, t, se, own, pooled_sd, min(p.prior_df for p in pooled) if pooled else 0, within_se)


def consistent(a: Interval, b: Interval, coverage: float = COVERAGE) -> bool:
    """Whether two independent estimates of one ratio (one configuration in two runs) differ by no more than
    their intervals allow together: |log(a / b)| within t x sqrt(se_a^2 + se_b^2), t at the fewer degrees of
    freedom. Where both intervals are right, ``coverage`` of such pairs are consistent. One's point inside
    the other's interval is a stricter test, which right intervals fail far more often, since that point is
    noisy too: of three runs with exact intervals, 84 % of the points fall inside both other runs' (tests)."""
    df = min(a.df, b.df)
    t = t_quantile(df, coverage) if df > 0 else math.inf
    return abs(math.log(a.point / b.point)) <= t * math.hypot(a.se, b.se)


def within_se(noises: Iterable[float | None]) -> float:
    """The floor of a ratio's standard error from its sides' repetition noise (relative standard errors of
    the medians, one per side, each averaged over its rounds): their root sum of squares; missing ones
    count 0."""
    return math.sqrt(math.fsum((n or 0.0) ** 2 for n in noises if n is None or math.isfinite(n)))
