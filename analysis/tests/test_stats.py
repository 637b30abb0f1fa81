"""Statistics against values worked out by hand."""

from __future__ import annotations

import math

import pytest

from mpsbench_analysis.stats import _u_counts, coefficient_of_variation, mann_whitney_u, median, stdev


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
