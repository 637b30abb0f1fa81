"""Statistics against values worked out by hand."""

from __future__ import annotations

import math
import random

import pytest

from mpsbench_core.stats import (_u_counts, coefficient_of_variation, latency_stats, mann_whitney_u, median,
                                     percentile, stdev)


def test_median_and_cv_match_the_harness_definitions() -> None:
    assert median([3.0, 1.0, 2.0]) == 2.0
    assert median([4.0, 1.0, 3.0, 2.0]) == 2.5
    # mean 2, deviations -1, 0, 1 -> variance 2 / (3 - 1) = 1 -> cv 1 / 2
    assert coefficient_of_variation([1.0, 2.0, 3.0]) == pytest.approx(0.5)
    assert stdev([5.0]) == 0.0 and coefficient_of_variation([5.0]) == 0.0


def test_u_distribution_small_cases() -> None:
    # m = n = 2: orderings xxyy..yyxx give U = 0, 1, 2, 2, 3, 4 -> counts 1, 1, 2, 1, 1
    assert _u_counts(2, 2) == (1, 1, 2, 1, 1)
    # m = 1, n = 3: the single x sits in one of 4 places -> U = 0..3 once each
    assert _u_counts(1, 3) == (1, 1, 1, 1)
    counts = _u_counts(5, 5)
    assert sum(counts) == math.comb(10, 5) == 252
    assert counts[:6] == (1, 1, 2, 3, 5, 7)  # partitions of u into at most 5 parts of size <= 5


def test_exact_p_values() -> None:
    # 5 vs 5, every y above every x: U = 0, P(U <= 0) = 1/252, two-sided 2/252
    u, p = mann_whitney_u([1, 2, 3, 4, 5], [6, 7, 8, 9, 10])
    assert u == 0 and p == pytest.approx(2 / 252)
    # one pair out of order: U = 1, P(U <= 1) = 2/252, two-sided 4/252
    u, p = mann_whitney_u([1, 2, 3, 4, 6.5], [6, 7, 8, 9, 10])
    assert u == 1 and p == pytest.approx(4 / 252)
    # 3 vs 3 fully separated: 2/20 -- three repetitions can never reach p < 0.05
    assert mann_whitney_u([1, 2, 3], [4, 5, 6])[1] == pytest.approx(0.1)
    # symmetric: swapping the samples gives U' = mn - U and the same p
    u2, p2 = mann_whitney_u([6, 7, 8, 9, 10], [1, 2, 3, 4, 6.5])
    assert u2 == 24 and p2 == pytest.approx(4 / 252)


def test_normal_approximation_with_ties() -> None:
    # x = 1,1,2  y = 2,3,3: U = 0.5 (the tied 2s count half); N = 6, tie groups of 2, 2, 2:
    # var = 3*3/12 * (7 - 3*(8-2)/(6*5)) = 0.75 * 6.4 = 4.8; z = (|0.5 - 4.5| - 0.5) / sqrt(4.8)
    u, p = mann_whitney_u([1, 1, 2], [2, 3, 3])
    assert u == 0.5
    z = 3.5 / math.sqrt(4.8)
    assert p == pytest.approx(math.erfc(z / math.sqrt(2)))
    assert 0.10 < p < 0.12


def test_degenerate_samples() -> None:
    assert mann_whitney_u([1.0, 1.0], [1.0, 1.0])[1] == 1.0
    assert mann_whitney_u([], [1.0])[1] == 1.0


# ---- percentiles: the definition the harness's latency p50/p95/p99 follow --------------------------

@pytest.mark.parametrize("values, q, expected", [
    # position h = q/100 * (n - 1) in the sorted values, linear between its neighbours
    ([1.0, 2.0, 3.0, 4.0], 50, 2.5),          # h = 1.5: 2 + 0.5 * (3 - 2)
    ([10.0, 20.0, 30.0, 40.0, 50.0], 50, 30.0),  # h = 2: exactly the middle value
    ([10.0, 20.0, 30.0, 40.0, 50.0], 95, 48.0),  # h = 3.8: 40 + 0.8 * 10
    ([10.0, 20.0, 30.0, 40.0, 50.0], 99, 49.6),  # h = 3.96: 40 + 0.96 * 10
    ([50.0, 10.0, 40.0, 20.0, 30.0], 95, 48.0),  # order of the input does not matter
    ([float(v) for v in range(1, 101)], 50, 50.5),   # h = 49.5: 50 + 0.5
    ([float(v) for v in range(1, 101)], 95, 95.05),  # h = 94.05: 95 + 0.05
    ([float(v) for v in range(1, 101)], 99, 99.01),  # h = 98.01: 99 + 0.01
    ([7.0], 99, 7.0),                          # one request: every percentile is it
    ([3.0, 1.0], 0, 1.0), ([3.0, 1.0], 100, 3.0),  # the ends are min and max
    ([1e-3, 1e-3, 5e-3], 99, 0.00492),         # h = 1.98: 1e-3 + 0.98 * 4e-3
])
def test_percentile_by_hand(values: list[float], q: float, expected: float) -> None:
    assert percentile(values, q) == pytest.approx(expected, rel=1e-12)


def test_percentile_is_numpys_default() -> None:
    import numpy as np
    rng = random.Random(3)
    for n in (1, 2, 3, 10, 101, 1000):
        values = [rng.lognormvariate(-7, 0.5) for _ in range(n)]
        for q in (0, 1, 50, 95, 99, 99.9, 100):
            assert percentile(values, q) == pytest.approx(float(np.percentile(values, q)), rel=1e-12)


def test_percentile_refuses_nothing_and_out_of_range() -> None:
    with pytest.raises(ValueError):
        percentile([], 50)
    with pytest.raises(ValueError):
        percentile([1.0], 101)


def test_latency_stats_by_hand() -> None:
    # 1..5 ms: mean 3 ms, p50 3 ms, p95 at h = 3.8 -> 4.8 ms, p99 at h = 3.96 -> 4.96 ms, max 5 ms
    stats = latency_stats([0.005, 0.001, 0.004, 0.002, 0.003])
    assert stats["count"] == 5
    for key, value in (("mean", 0.003), ("p50", 0.003), ("p95", 0.0048), ("p99", 0.00496), ("max", 0.005)):
        assert stats[key] == pytest.approx(value, rel=1e-12), key
