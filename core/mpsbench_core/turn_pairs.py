"""Repetitions that ran next to each other: the per-round MPS gain of two records that took turns.

mpsbench-sweep --turns runs a round's modes at once and gives one repetition at a time, by the lowest
(configuration, repetition) asked (harness/sweep/mpsbench_sweep/turns.py): repetition i of a configuration
in one mode ran within a few turns of repetition i of the same configuration in every other mode of the
group, on the same cores. A shared host's CPU speed drifts over seconds; within one turn cycle (three
repetitions of 20 ms) it barely moves, so the ratio of two such repetitions leaves the drift out, which
the ratio of the two records' medians does not: the repetitions of one mode move together (correlation
0.5-0.6 at one rank per GPU on the H200 runs of 2026-11-29) and the variance of a per-repetition log ratio
is about half the unpaired one. Pairing is the measurement design's own estimate, as in a paired-samples
test; the round-to-round spread still makes every interval (intervals.py).

Two records are paired by repetition (:func:`aligned`) only where the sweep says they took turns in one
group (each record's ``turn_group``, which the sweep writes beside ``round``), they are one configuration
(subject, size, ranks per GPU) in two modes of the same round, and every repetition each took is in its
samples: none was dropped and taken again (a retaken repetition shifts the ones after it to a later turn).
A ratio between two configurations (mps at k=2 against mps at k=4, or the best of mps against the best of
timeslice at another k) is paired by round. Anything else, and every
file written before the sweep recorded turn groups, is paired by round: the log ratio of the medians.
"""

from __future__ import annotations

import math
from typing import Any, Mapping

from .records import Result
from .stats import MEDIAN_SE_FACTOR, median, stdev


def _group(r: Result) -> int | None:
    value = r.raw.get("turn_group") if isinstance(r.raw, Mapping) else None
    return value if isinstance(value, int) and not isinstance(value, bool) and value >= 0 else None


def _retaken(r: Result) -> bool:
    """Whether any repetition was dropped and taken again (CPU-slowed or throttled), or cannot be told."""
    for part in ("cpu", "clocks"):
        found: Any = r.raw.get(part) if isinstance(r.raw, Mapping) else None
        if isinstance(found, Mapping):
            dropped = found.get("discarded_repetitions")
            if dropped not in (None, 0):
                return True
    return False


def aligned(a: Result, b: Result) -> bool:
    """a's repetition i ran next to b's repetition i: one configuration (subject, size and ranks per GPU;
    the modes differ) in one turn group, the same count, nothing retaken (the caller pairs records of one
    round). Two configurations of one group, say mps at k=2 and at k=4, ran their repetitions apart."""
    group = _group(a)
    same = (a.subject, a.size, a.ranks_per_gpu) == (b.subject, b.size, b.ranks_per_gpu)
    return (same and group is not None and group == _group(b) and a.usable and b.usable
            and len(a.samples) == len(b.samples) >= 1 and all(x > 0 for x in a.samples + b.samples)
            and not _retaken(a) and not _retaken(b))


def log_ratios(a: Result, b: Result) -> list[float]:
    """log(a_i / b_i) per repetition of two aligned records."""
    return [math.log(x / y) for x, y in zip(a.samples, b.samples)]


def log_ratio(a: Result, b: Result) -> float:
    """The round's log gain of two aligned records: the median of the per-repetition log ratios."""
    return median(log_ratios(a, b))


def noise(a: Result, b: Result) -> float | None:
    """The standard error of :func:`log_ratio` from its repetitions (the estimator of a record's own
    ``noise.relative``, median_se_normal, on the log ratios); None with fewer than two repetitions."""
    d = log_ratios(a, b)
    return MEDIAN_SE_FACTOR * stdev(d) / math.sqrt(len(d)) if len(d) >= 2 else None
