"""The noise-aware FASTER / SLOWER / SAME / NOISY rule.

Higher is better (throughput, MPS gain; a latency is judged with the
direction turned: higher is worse).  With change = median(new) /
median(base) - 1:
  SAME    |change| <= threshold.
  FASTER / SLOWER (by the sign of change) when |change| > threshold and
          either the min..max ranges of the two samples do not overlap
          (both with at least ``min_samples`` values), or the two-sided
          Mann-Whitney p < alpha while neither sample's CV exceeds max_cv.
  NOISY   |change| > threshold without that evidence: the medians moved, but
          the repetitions cannot tell a change from noise.
A change inside the threshold is SAME even when significant: the threshold
is the smallest change worth a person's attention.  Disjoint ranges win
over a high CV because then every repetition of one side beat every
repetition of the other.

A throughput is not SLOWER (FASTER) where its slower side ran on a slowed
CPU (:func:`cpu_slowed`): mpsbench's CPU probe, a fixed loop timed beside
every repetition, found that side's CPU slowed in at least half of its
repetitions.  The probe does not run the code under test, so such a change
is the machine's (a shared host's vCPU; one H200 run had every repetition
of matmul bf16 1024 at one rank so, at two thirds of another run's
TFLOP/s): NOISY, with the reason.  A stable configuration is not slowed,
and a real slowdown of it still fails the gate.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Sequence

from mpsbench_core.stats import coefficient_of_variation, mann_whitney_u, median

FASTER, SLOWER, SAME, NOISY = "FASTER", "SLOWER", "SAME", "NOISY"

#: The share of a side's repetitions that must be CPU-slowed (the record's cpu.slowed_repetitions) for a
#: change towards that side to be the machine's.
CPU_SLOWED_SHARE = 0.5


def cpu_slowed(verdict: str, base: tuple[int, int], new: tuple[int, int]) -> str | None:
    """Why a FASTER or SLOWER throughput is the machine's: its slower side's (slowed, repetitions) reach
    CPU_SLOWED_SHARE; None when they do not (or the verdict is no change)."""
    if verdict not in (FASTER, SLOWER):
        return None
    side, (slowed, repetitions) = ("NEW", new) if verdict == SLOWER else ("BASE", base)
    if repetitions <= 0 or slowed < CPU_SLOWED_SHARE * repetitions:
        return None
    return (f"{side}'s CPU was slowed in {slowed} of {repetitions} repetitions (the CPU probe): the machine's, "
            f"not a change of the code")


@dataclass(frozen=True)
class Rule:
    """Parameters of the rule (the CLI's --threshold, --alpha, --max-cv, --min-samples)."""

    threshold: float = 0.05
    alpha: float = 0.05
    max_cv: float = 0.10
    min_samples: int = 3


@dataclass(frozen=True)
class Verdict:
    verdict: str
    base_median: float
    new_median: float
    change: float
    p_value: float
    base_cv: float
    new_cv: float
    disjoint: bool
    reason: str


def judge(base: Sequence[float], new: Sequence[float], rule: Rule = Rule(), higher_is_better: bool = True,
          values: tuple[float, float] | None = None, samples_word: str = "repetitions") -> Verdict:
    """Applies the rule to two samples of a higher-is-better quantity.

    ``higher_is_better=False`` (a latency): the same rule with the direction
    turned, SLOWER when the value grew by more than the threshold.
    ``values``: the (base, new) figures whose change is judged, when they are
    not the samples' medians (a record's overall p99 latency, judged with the
    ranks' p99s as the samples that give the evidence); ``samples_word``
    names the samples in a reason.
    """
    if not base or not new:
        raise ValueError("judge needs samples on both sides")
    mb, mn = values if values is not None else (median(base), median(new))
    change = mn / mb - 1.0 if mb > 0 else (math.inf if mn > 0 else 0.0)
    _, p = mann_whitney_u(new, base)
    cvb, cvn = coefficient_of_variation(base), coefficient_of_variation(new)
    enough = min(len(base), len(new)) >= rule.min_samples
    disjoint = enough and (max(new) < min(base) or min(new) > max(base))

    def make(verdict: str, reason: str) -> Verdict:
        return Verdict(verdict, mb, mn, change, p, cvb, cvn, disjoint, reason)

    if abs(change) <= rule.threshold:
        return make(SAME, f"|change| <= {rule.threshold:.0%}")
    direction = (FASTER if change > 0 else SLOWER) if higher_is_better else (SLOWER if change > 0 else FASTER)
    if disjoint:
        return make(direction, "ranges do not overlap")
    if p < rule.alpha:
        if max(cvb, cvn) <= rule.max_cv:
            return make(direction, f"p = {p:.3g} < {rule.alpha:g}")
        return make(NOISY, f"p = {p:.3g} but cv {max(cvb, cvn):.0%} > {rule.max_cv:.0%}")
    if not enough:
        return make(NOISY, f"fewer than {rule.min_samples} {samples_word} and p = {p:.3g}")
    return make(NOISY, f"not significant (p = {p:.3g} >= {rule.alpha:g})")
