"""crossover against the fixture's gains, worked out by hand.

matmul fp32 gains (mps / timeslice) by size at 4 ranks per GPU:
  256: 4.8 / 2.4 = 2.0   1024: 13.2 / 11 = 1.2   4096: 42 / 40 = 1.05
and at 2 ranks: 3.3 / 2.2 = 1.5, 12.6 / 10.5 = 1.2, 41 / 40 = 1.025.
nbody fp32 at 4 ranks: 256: 1.0 / 1.0 = 1.0, 1024: 1.3 / 1.0 = 1.3.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from mpsbench_analysis import AnalysisError, load_results
from mpsbench_analysis.crossover import crossovers, find_crossover, render_crossovers


def _by_kernel(path: Path, **kw):
    return {c.kernel: c for c in crossovers(load_results([path]), **kw)}


def test_default_threshold_at_largest_ranks(sweep_file: Path) -> None:
    found = _by_kernel(sweep_file)
    m = found["matmul"]
    assert m.ranks_per_gpu == 4
    assert list(m.table["size"]) == [256, 1024, 4096]
    assert list(m.table["gain"]) == pytest.approx([2.0, 1.2, 1.05])
    # 1.05 < 1.1 at 4096 only, 1.2 >= 1.1 at 1024 -> crossover 4096
    assert (m.size, m.outcome) == (4096, "below")
    assert "stops paying off at size 4096" in m.message
    # nbody: 1.3 >= 1.1 at the largest size -> no crossover, though 256 falls short
    n = found["nbody"]
    assert (n.size, n.outcome) == (None, "largest")
    assert "only at 256" in n.message


@pytest.mark.parametrize("threshold, size, outcome", [
    (1.25, 1024, "below"),   # 1.2 and 1.05 < 1.25, 2.0 >= 1.25
    (2.5, 256, "never"),     # every gain < 2.5
    (1.0, None, "every"),    # every gain >= 1.0
    (1.05, None, "every"),   # 1.05 >= 1.05: equality pays off
])
def test_thresholds(sweep_file: Path, threshold: float, size, outcome: str) -> None:
    m = _by_kernel(sweep_file, threshold=threshold)["matmul"]
    assert (m.size, m.outcome) == (size, outcome)


def test_ranks_option(sweep_file: Path) -> None:
    found = crossovers(load_results([sweep_file]), threshold=1.1, ranks=2)
    assert [c.kernel for c in found] == ["matmul"]  # nbody has no 2-rank runs
    assert list(found[0].table["gain"]) == pytest.approx([1.5, 1.2, 1.025])
    assert found[0].size == 4096
    with pytest.raises(AnalysisError, match="no configuration at 3 ranks per GPU"):
        crossovers(load_results([sweep_file]), ranks=3)


def test_find_crossover_needs_every_larger_size_below() -> None:
    # dips below at 2 and recovers at 3: the crossover is 4, not 2
    assert find_crossover([1, 2, 3, 4, 5], [1.5, 1.0, 1.3, 1.0, 0.9], 1.1) == (4, "below")


def test_renderings(sweep_file: Path) -> None:
    found = crossovers(load_results([sweep_file]))
    text = render_crossovers(found, "table")
    assert "matmul fp32, 4 ranks per GPU" in text and "1.050" in text
    assert "### matmul fp32" in render_crossovers(found, "markdown")
    csv = render_crossovers(found, "csv").splitlines()
    assert csv[0].startswith("kernel,precision,ranks_per_gpu,mode,size")
    assert len(csv) == 1 + 3 + 2
