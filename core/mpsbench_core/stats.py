"""Small statistics without scipy: the one definition of each figure the sweep and the analysis show.

Benchmarks give a handful of repetitions per configuration, so the
Mann-Whitney U test is computed exactly (by counting rank arrangements)
whenever it can be, where a normal approximation would be poor; the
normal approximation with tie correction is used only for ties or larger
samples.  Definitions match the C++ harness (harness/stats.cpp) so that a
CV computed here equals the file's ``aggregate_cv``.
"""

from __future__ import annotations

import math
from functools import lru_cache
from typing import Sequence

#: Largest sample size for which the exact U distribution is used.
EXACT_LIMIT = 20


def median(values: Sequence[float]) -> float:
    """Median; the mean of the two middle values for an even count."""
    if not values:
        raise ValueError("median of no values")
    ordered = sorted(values)
    mid = len(ordered) // 2
    return ordered[mid] if len(ordered) % 2 else 0.5 * (ordered[mid - 1] + ordered[mid])


def mean(values: Sequence[float]) -> float:
    if not values:
        raise ValueError("mean of no values")
    return math.fsum(values) / len(values)


def stdev(values: Sequence[float]) -> float:
    """Sample standard deviation (n - 1); 0 for fewer than two values."""
    if len(values) < 2:
        return 0.0
    m = mean(values)
    return math.sqrt(math.fsum((v - m) ** 2 for v in values) / (len(values) - 1))


def coefficient_of_variation(values: Sequence[float]) -> float:
    """stdev / |mean| as in the harness: 0 for fewer than two values or mean 0."""
    if len(values) < 2:
        return 0.0
    m = mean(values)
    return 0.0 if m == 0 else stdev(values) / abs(m)


#: Standard error of the median over that of the mean for normal samples, sqrt(pi / 2) = 1.2533
#: (harness/stats.cpp, ``relative_median_standard_error``).
MEDIAN_SE_FACTOR = math.sqrt(math.pi / 2)

#: The harness's name for that estimator (``noise.estimator``).
NOISE_ESTIMATOR = "median_se_normal"


def relative_noise(values: Sequence[float]) -> float:
    """Relative standard error of the median: 1.2533 * stdev / (sqrt(n) * median).

    The noise figure of a result (``noise.relative`` in newer files): how far
    the median throughput would move between runs, relative to itself.  NaN
    for fewer than two values (no spread to estimate) or a median of 0 (the
    harness writes null for both).
    """
    if len(values) < 2:
        return math.nan
    m = median(values)
    if m == 0:
        return math.nan
    return MEDIAN_SE_FACTOR * stdev(values) / (math.sqrt(len(values)) * abs(m))


def percentile(values: Sequence[float], q: float) -> float:
    """The q-th percentile (0 <= q <= 100) by linear interpolation between the closest ranks.

    With the values sorted ascending as x[0..n-1], the position is
    ``h = q / 100 * (n - 1)`` and the percentile ``x[floor(h)] + (h - floor(h))
    * (x[floor(h) + 1] - x[floor(h)])`` (``x[n - 1]`` at h = n - 1): numpy's
    default method ("linear", type 7 of Hyndman and Fan), and what
    harness/stats.cpp ``percentile`` writes as a record's latency p50, p95
    and p99.  One value is every percentile of itself.
    """
    if not values:
        raise ValueError("percentile of no values")
    if not 0 <= q <= 100:
        raise ValueError(f"percentile {q} outside 0..100")
    ordered = sorted(values)
    position = q / 100.0 * (len(ordered) - 1)
    below = math.floor(position)
    above = min(below + 1, len(ordered) - 1)
    return ordered[below] + (position - below) * (ordered[above] - ordered[below])


#: The percentiles a latency record carries, by field name.
LATENCY_PERCENTILES = {"p50": 50.0, "p95": 95.0, "p99": 99.0}


def latency_stats(seconds: Sequence[float]) -> dict[str, float | int]:
    """``{count, mean, p50, p95, p99, max}`` of request latencies, as the harness writes
    ``latency.overall`` and ``ranks[].latency_s`` (percentiles: :func:`percentile`)."""
    if not seconds:
        raise ValueError("latency of no requests")
    out: dict[str, float | int] = {"count": len(seconds), "mean": mean(seconds)}
    out.update({name: percentile(seconds, q) for name, q in LATENCY_PERCENTILES.items()})
    out["max"] = max(seconds)
    return out


@lru_cache(maxsize=None)
def _u_counts(m: int, n: int) -> tuple[int, ...]:
    """Number of orderings of m x's and n y's giving each U = #(x > y) pairs.

    Recurrence on the largest value: if it is an x it beats all n y's
    (U shifts by n, m-1 x's left), otherwise it is a y and adds nothing.
    """
    if m == 0 or n == 0:
        return (1,)
    with_x = _u_counts(m - 1, n)
    with_y = _u_counts(m, n - 1)
    out = [0] * (m * n + 1)
    for u, c in enumerate(with_x):
        out[u + n] += c
    for u, c in enumerate(with_y):
        out[u] += c
    return tuple(out)


def _normal_sf(z: float) -> float:
    return 0.5 * math.erfc(z / math.sqrt(2.0))


def mann_whitney_u(x: Sequence[float], y: Sequence[float]) -> tuple[float, float]:
    """Two-sided Mann-Whitney U test of x against y.

    Returns (U, p) with U = #(x_i > y_j) + 0.5 #(x_i == y_j).  p is exact
    when both samples have at most EXACT_LIMIT values and there are no ties
    between them; otherwise the normal approximation with tie and continuity
    correction.  p is 1.0 when either sample is empty or all values are equal.
    """
    m, n = len(x), len(y)
    if m == 0 or n == 0:
        return math.nan, 1.0
    u = sum(1.0 if a > b else 0.5 if a == b else 0.0 for a in x for b in y)
    pooled = list(x) + list(y)
    tied = len(set(pooled)) < len(pooled)
    if not tied and m <= EXACT_LIMIT and n <= EXACT_LIMIT:
        counts = _u_counts(m, n)
        total = math.comb(m + n, m)
        k = int(round(u))
        lower = sum(counts[: k + 1]) / total
        upper = sum(counts[k:]) / total
        return u, min(1.0, 2.0 * min(lower, upper))
    big_n = m + n
    tie_sizes: dict[float, int] = {}
    for v in pooled:
        tie_sizes[v] = tie_sizes.get(v, 0) + 1
    tie_term = sum(t**3 - t for t in tie_sizes.values()) / (big_n * (big_n - 1))
    variance = m * n / 12.0 * ((big_n + 1) - tie_term)
    if variance <= 0:
        return u, 1.0
    z = (abs(u - m * n / 2.0) - 0.5) / math.sqrt(variance)
    return u, min(1.0, 2.0 * _normal_sf(max(z, 0.0)))


def jain_fairness(values: Sequence[float]) -> float:
    """Jain's fairness index (sum x)^2 / (n sum x^2): 1 when every value is equal, 1/n when one has all;
    1 for no values or all zero (nothing was shared unfairly)."""
    squares = math.fsum(v * v for v in values)
    if not values or squares == 0:
        return 1.0
    total = math.fsum(values)
    return total * total / (len(values) * squares)


def summary(values: Sequence[float]) -> dict[str, float | list[float]]:
    """``{median, min, max, samples}``: the results format's summary of repetitions."""
    if not values:
        raise ValueError("summary of no values")
    return {"median": median(values), "min": min(values), "max": max(values), "samples": list(values)}

