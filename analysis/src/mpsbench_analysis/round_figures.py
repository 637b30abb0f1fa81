"""What a results file measured in rounds, by core's definitions (mpsbench_core.rounds, .intervals): per
configuration its rounds' medians, per MPS gain its per-round gains, and the pooled round-to-round spreads
the intervals are moderated with. compare.py judges two runs with them (:func:`judge_rounds`) and agree.py
several.

Pools are per file side and per size: a configuration's throughput spread is pooled over the ranks per GPU of
its subject (kind, kernel, precision, params), mode and size; a gain's over the gains of its subject and size
(rounds.gain_pairs). Per size, because the noise is: on a shared host a launch-bound 512 matmul moves 20 %
between processes while an 8192 one moves 0.1 %, and a pool over every size gave the 8192 cells a +-25 %
interval at the gate's coverage, in which a real 10 % slowdown would hide.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from mpsbench_core.intervals import COVERAGE, Interval, Pool, difference_interval, family_coverage
from mpsbench_core.rounds import Config, configs, gain_pairs, paired, pool_of, within

from .loader import ResultSet
from .regression_rule import FASTER, NOISY, SAME, SLOWER, Rule

#: A key of compare's rows: (kind, kernel, precision, size, ranks_per_gpu, mode_label, params) (loader.KEY).
Key = tuple
#: A gain's key: (kind, kernel, precision, size, ranks_per_gpu, params) (summary.GROUP).
GainKey = tuple


@dataclass(frozen=True)
class Series:
    """One figure's rounds (throughput medians, or per-round gains), its pool and its within-round noise."""

    values: tuple[float, ...]
    pool: Pool | None
    noise: float        # relative standard error of the figure from the repetitions inside its rounds

    @property
    def rounds(self) -> int:
        return len(self.values)


def _key(c: Config) -> Key:
    kind, name, precision, params = c.first.subject
    return kind, name, precision, c.first.size, c.first.ranks_per_gpu, c.first.mode_label, params


def _by_subject(rs: ResultSet) -> dict[tuple, list[Config]]:
    out: dict[tuple, list[Config]] = {}
    for c in configs(rs.records()):
        out.setdefault(c.first.subject, []).append(c)
    return out


def throughput_series(rs: ResultSet) -> dict[Key, Series]:
    """Every configuration with a usable round: its rounds' medians (round order)."""
    out = {}
    for found in _by_subject(rs).values():
        by_mode: dict[tuple, list[Config]] = {}
        for c in found:
            by_mode.setdefault((c.first.mode_label, c.first.size), []).append(c)
        for mine in by_mode.values():
            pool = Pool.of([math.log(v) for v in c.by_round().values()] for c in mine)
            for c in mine:
                if c.figure is not None:
                    out[_key(c)] = Series(tuple(c.by_round()[r] for r in sorted(c.by_round())), pool, c.noise)
    return out


def gain_series(rs: ResultSet, mode: str = "mps") -> dict[GainKey, Series]:
    """Every ``mode`` / timeslice gain measured in at least one common round: its per-round gains."""
    out = {}
    for found in _by_subject(rs).values():
        pairs = gain_pairs(found, mode)
        pools = {size: pool_of(p for p in pairs if p[0].first.size == size) for size in {m.first.size for m, _ in pairs}}
        for m, t in pairs:
            pool = pools[m.first.size]
            d = paired(m, t)
            if d:
                kind, name, precision, size, k, _, params = _key(m)
                gains = tuple(math.exp(x) for x in d)
                out[(kind, name, precision, size, k, params)] = Series(gains, pool, within(m, t))
    return out


def latency_series(rs: ResultSet) -> dict[Key, Series]:
    """Every configuration with a p99 request latency in its rounds: each round's overall p99 (round order),
    pooled like the throughputs (per subject, mode and size)."""
    rows = rs.round_results
    if rows.empty or "latency_p99_s" not in rows:
        return {}
    found: dict[Key, dict[int, float]] = {}
    for _, r in rows[rows["latency_p99_s"].notna() & (rows["status"] == "ok")].iterrows():
        key = tuple(r[k] for k in ("kind", "kernel", "precision", "size", "ranks_per_gpu", "mode_label", "params"))
        found.setdefault(key, {})[int(r["round"])] = float(r["latency_p99_s"])
    pools: dict[tuple, list[list[float]]] = {}
    for key, by_round in found.items():
        pools.setdefault((key[:4], key[5], key[6]), []).append([math.log(v) for v in by_round.values() if v > 0])
    pooled = {group: Pool.of(values) for group, values in pools.items()}
    return {key: Series(tuple(by_round[i] for i in sorted(by_round)), pooled[(key[:4], key[5], key[6])], 0.0)
            for key, by_round in found.items()}


def several(*series: Series | None) -> bool:
    """Whether every side was measured in two rounds or more: then the rounds judge, not the repetitions."""
    return all(s is not None and s.rounds >= 2 for s in series)


def change_interval(base: Series, new: Series, coverage: float = COVERAGE) -> Interval:
    """new / base with its interval of that coverage (core intervals.difference_interval)."""
    return difference_interval(new.values, base.values, new.pool, base.pool, math.hypot(base.noise, new.noise),
                               coverage)


@dataclass(frozen=True)
class RoundVerdict:
    verdict: str
    base: float
    new: float
    change: float
    interval: Interval
    reason: str


def judge_rounds(base: Series, new: Series, rule: Rule, higher_is_better: bool = True,
                 figures: int = 1) -> RoundVerdict:
    """The gate's rule for figures measured in rounds: SAME within the threshold; SLOWER or FASTER only where
    the change is beyond the threshold and its interval lies wholly on that side of 1 (outside what the two
    files' spreads between rounds allow); NOISY otherwise. figures: how many the gate judges by rounds at
    once; each interval has the coverage that keeps all of them 95 % (core intervals.family_coverage)."""
    coverage = family_coverage(figures)
    interval = change_interval(base, new, coverage)
    change = interval.point - 1.0
    b = math.exp(sum(map(math.log, base.values)) / base.rounds)
    n = math.exp(sum(map(math.log, new.values)) / new.rounds)
    level = "" if figures <= 1 else f", {coverage:.4%} interval: 95 % over the {figures} figures judged"
    why = (f"new/base {interval.point:.3f} [{interval.low:.3f}-{interval.high:.3f}] over {base.rounds} and "
           f"{new.rounds} rounds{level}")
    if abs(change) <= rule.threshold:
        return RoundVerdict(SAME, b, n, change, interval, f"|change| <= {rule.threshold:.0%}; {why}")
    up = change > 0
    direction = (FASTER if up else SLOWER) if higher_is_better else (SLOWER if up else FASTER)
    if (interval.low > 1.0) if up else (interval.high < 1.0):
        return RoundVerdict(direction, b, n, change, interval, f"outside the rounds' spread: {why}")
    return RoundVerdict(NOISY, b, n, change, interval, f"within the rounds' spread: {why}")

