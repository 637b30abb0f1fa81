"""The figures a results record derives from its own raw measurements, one definition each (issue 37): the sweep
writes with these (mpsbench_sweep.app.results), the analysis re-derives every record with them and refuses a file
that disagrees (mpsbench_analysis.derived, whose table names the function of each field), and the C++ engine's
tests compare its own arithmetic against them.  The others live where they were defined first: stats.py (a
summary's median, min and max; CV, relative noise, Jain's index), speedup.py, app_energy.py (energy per unit).
"""

from __future__ import annotations

import math
from typing import Sequence

from .stats import mean, median

#: A rate's hour: the sweep's runs per hour are the runs per second's median x this.
SECONDS_PER_HOUR = 3600.0


def rate_samples(work: Sequence[float], windows: Sequence[float]) -> list[float]:
    """Each repetition's rate: work[i] / windows[i], 0 for an empty window (what harness/result.cpp writes)."""
    return [done / window if window > 0 else 0.0 for done, window in zip(work, windows)]


def kernel_work(active_ranks: int, iterations_per_repetition: int, work_per_iteration: float) -> float:
    """A kernel repetition's work: active ranks x iterations x work per iteration, multiplied in the engine's
    order (iterations first, as a double) so that a reader gets the writer's double back."""
    return float(iterations_per_repetition) * active_ranks * work_per_iteration


def runs_per_hour(run_per_s_median: float) -> float:
    """An application's runs per hour: the median of its runs per second x 3600."""
    return run_per_s_median * SECONDS_PER_HOUR


def copy_spread(medians: Sequence[float]) -> float | None:
    """(largest - smallest) / mean of the copies' own medians; None without copies or a mean of 0."""
    average = mean(medians) if medians else 0.0
    return (max(medians) - min(medians)) / average if average > 0 else None


def ratio(numerator: float | None, denominator: float | None) -> float | None:
    """numerator / denominator, None where either is missing or the denominator is not positive: a mix tenant's
    slowdown (alone_throughput / throughput.median) and latency ratio (p99 / alone p99)."""
    if numerator is None or denominator is None or denominator <= 0:
        return None
    return numerator / denominator


def fraction_of_iteration(per_iteration_median: float, iteration_medians: Sequence[float]) -> float:
    """A collective's time per iteration over the median of the timed ranks' iteration medians (0 when that is 0)."""
    iteration = median(iteration_medians)
    return per_iteration_median / iteration if iteration > 0 else 0.0


def kept_work(samples: Sequence[float], windows: Sequence[float]) -> float:
    """The work of the kept repetitions at their rates: the sum of samples[i] x windows[i]."""
    return math.fsum(s * w for s, w in zip(samples, windows))


def per_unit_over_span(joules: float, samples: Sequence[float], span_s: float,
                       seconds_per_unit_time: float = 1.0) -> tuple[float, float] | None:
    """The range of joules per unit where the meter spanned ``span_s`` at the repetitions' rates (per their
    time unit, in seconds): joules / (fastest rate x span) to joules / (slowest rate x span); None where a
    rate is not positive."""
    if not samples or min(samples) <= 0:
        return None
    span = span_s / seconds_per_unit_time
    return joules / (max(samples) * span), joules / (min(samples) * span)
