"""The verdict rule and the comparison of two runs.

Sample sets are chosen so the statistics can be checked by hand: for 5 vs 5
repetitions without ties the two-sided exact Mann-Whitney p is
2 * #(orderings with U <= u) / C(10, 5); the counts for U = 0, 1, 2 are 1, 1, 2.
"""

from __future__ import annotations

from pathlib import Path

import pytest

import builder
from mpsbench_analysis import load_results
from mpsbench_analysis.compare import compare
from mpsbench_analysis.compare_text import headline, render_comparison
from mpsbench_analysis.regression_rule import FASTER, NOISY, SAME, SLOWER, Rule, judge

BASE_TIGHT = [9.98, 9.99, 10.0, 10.01, 10.02]


@pytest.mark.parametrize("base, new, verdict, why", [
    # +2 %: inside the 5 % threshold, SAME although every new value is larger
    (BASE_TIGHT, [10.18, 10.19, 10.2, 10.21, 10.22], SAME, "|change| <= 5%"),
    # -10 %, ranges 8.98..9.02 and 9.98..10.02 do not overlap
    (BASE_TIGHT, [8.98, 8.99, 9.0, 9.01, 9.02], SLOWER, "ranges do not overlap"),
    (BASE_TIGHT, [10.98, 10.99, 11.0, 11.01, 11.02], FASTER, "ranges do not overlap"),
    # medians 10.1 -> 9.1 (-9.9 %); only 9.3 > 9.25 is out of order: U = 1, p = 2 * 2/252 = 0.0159;
    # CVs 4.2 % and 1.7 % are below 10 %
    ([9.25, 10.0, 10.1, 10.2, 10.3], [8.9, 9.0, 9.1, 9.2, 9.3], SLOWER, "p = 0.0159 < 0.05"),
    # same U = 1 (10.05 > 10.0), but the base outlier 15.0 gives a CV of 19.5 % > 10 %
    ([10.0, 10.1, 10.2, 10.3, 15.0], [9.0, 9.1, 9.2, 9.3, 10.05], NOISY, "cv 20% > 10%"),
    # medians 10 -> 9.05 (-9.5 %) but U = 0+1+2+3+4 = 10: p = 0.69, not significant
    ([8.0, 9.0, 10.0, 11.0, 12.0], [7.5, 8.5, 9.05, 10.5, 11.5], NOISY, "not significant"),
    # 2 vs 2 disjoint: too few repetitions for the range rule, p = 2/6
    ([10.0, 10.1], [9.0, 9.1], NOISY, "fewer than 3 repetitions"),
    # 3 vs 3 disjoint: the range rule applies (p alone, 0.1, could never do it)
    ([10.0, 10.1, 10.2], [9.0, 9.1, 9.2], SLOWER, "ranges do not overlap"),
])
def test_verdict_rule(base: list[float], new: list[float], verdict: str, why: str) -> None:
    v = judge(base, new)
    assert v.verdict == verdict
    assert why in v.reason


def test_rule_parameters_matter() -> None:
    noisy_base, noisy_new = [10.0, 10.1, 10.2, 10.3, 15.0], [9.0, 9.1, 9.2, 9.3, 10.05]
    assert judge(noisy_base, noisy_new, Rule(max_cv=0.25)).verdict == SLOWER
    assert judge(BASE_TIGHT, [8.98, 8.99, 9.0, 9.01, 9.02], Rule(threshold=0.15)).verdict == SAME
    v = judge([9.25, 10.0, 10.1, 10.2, 10.3], [8.9, 9.0, 9.1, 9.2, 9.3], Rule(alpha=0.01))
    assert v.verdict == NOISY and v.p_value == pytest.approx(4 / 252)
    assert v.change == pytest.approx(9.1 / 10.1 - 1)


def _pair(tmp_path: Path) -> tuple[Path, Path]:
    """BASE and NEW with one configuration per outcome (size says which)."""
    t = 1e12
    base = [builder.result(builder.flat(10 * t), size=s) for s in (1, 2, 3, 4, 5, 6, 7)]
    new = [
        builder.result(builder.flat(10.2 * t), size=1),                        # SAME
        builder.result(builder.flat(9 * t), size=2),                           # SLOWER
        builder.result(builder.flat(11 * t), size=3),                          # FASTER
        builder.result([7.5 * t, 8.5 * t, 9.05 * t, 10.5 * t, 11.5 * t], size=4),  # NOISY
        builder.result(builder.flat(10 * t), size=5, verified=False),          # lost verification
        builder.result(builder.flat(10 * t), size=6, status="failed"),         # failed in NEW
        builder.result(builder.flat(10 * t), size=8),                          # added
    ]
    base[3] = builder.result([8 * t, 9 * t, 10 * t, 11 * t, 12 * t], size=4)
    # MPS gain 15 / 10 = 1.5 in BASE, 15 / 12.5 = 1.2 in NEW (-20 %): mps itself is SAME,
    # timeslice FASTER, the gain SLOWER
    base += [builder.result(builder.flat(10 * t), size=100, ranks_per_gpu=2, mode="timeslice"),
             builder.result(builder.flat(15 * t), size=100, ranks_per_gpu=2, mode="mps")]
    new += [builder.result(builder.flat(12.5 * t), size=100, ranks_per_gpu=2, mode="timeslice"),
            builder.result(builder.flat(15 * t), size=100, ranks_per_gpu=2, mode="mps")]
    return (builder.write(tmp_path / "base.json", builder.document(base)),
            builder.write(tmp_path / "new.json", builder.document(new)))


def test_compare_every_outcome(tmp_path: Path) -> None:
    b, n = _pair(tmp_path)
    c = compare(load_results([b]), load_results([n]))
    by_size = {(r.size, r.mode_label): r for r in c.results.itertuples()}
    assert by_size[(1, "timeslice")].verdict == SAME
    assert by_size[(2, "timeslice")].verdict == SLOWER
    assert by_size[(2, "timeslice")].change == pytest.approx(-0.1)
    assert by_size[(3, "timeslice")].verdict == FASTER
    assert by_size[(4, "timeslice")].verdict == NOISY
    assert by_size[(5, "timeslice")].verdict == SAME and by_size[(5, "timeslice")].verified == "yes->NO"
    assert by_size[(6, "timeslice")].verdict == "FAILED"
    assert by_size[(100, "timeslice")].verdict == FASTER and by_size[(100, "mps")].verdict == SAME
    regressed = sorted(r.size for r in c.results.itertuples() if r.regression)
    assert regressed == [2, 5, 6]
    assert list(c.removed["size"]) == [7] and list(c.added["size"]) == [8]
    g = c.gains.iloc[0]
    assert (g["size"], g["verdict"]) == (100, SLOWER)
    assert g["base_gain"] == pytest.approx(1.5) and g["new_gain"] == pytest.approx(1.2)
    assert g["change"] == pytest.approx(-0.2)
    assert c.regressions == 4
    assert c.noisy == 1
    assert c.gate_failures() == ["4 regressions",
                                 "1 configuration of BASE missing from NEW (--allow-missing accepts that)"]
    assert c.gate_failures(allow_missing=True, fail_on_noisy=True) == ["4 regressions",
                                                                        "1 NOISY verdict (--fail-on-noisy)"]
    assert headline(c).startswith("REGRESSION: 8 matching results (1 SLOWER, 2 FASTER, 1 NOISY, 3 SAME, 1 FAILED)")


def test_markdown_page(tmp_path: Path) -> None:
    b, n = _pair(tmp_path)
    md = render_comparison(compare(load_results([b]), load_results([n])), "markdown", "base.json", "new.json")
    assert md.startswith("## mpsbench compare")
    assert "| matmul | fp32 | 2 | 1 | timeslice | 10.0 TFLOP/s | 9.00 TFLOP/s | -10.0% |" in md
    assert "### MPS gain over timeslice" in md and "| 1.500 | 1.200 | -20.0% |" in md
    assert "- `matmul/fp32/7/ranks:1/mode:timeslice`" in md  # removed
    assert "- `matmul/fp32/8/ranks:1/mode:timeslice`" in md  # added


def test_same_file_has_no_regression(sweep_file: Path) -> None:
    rs = load_results([sweep_file])
    c = compare(rs, rs)
    assert set(c.results["verdict"]) == {SAME} and set(c.gains["verdict"]) == {SAME}
    assert c.regressions == 0


def test_noisy_mps_gain_counts_for_fail_on_noisy(tmp_path: Path) -> None:
    t = 1e12
    wide_base, wide_new = [8 * t, 9 * t, 10 * t, 11 * t, 12 * t], [7.5 * t, 8.5 * t, 9.05 * t, 10.5 * t, 11.5 * t]
    ts = builder.result(builder.flat(10 * t), ranks_per_gpu=2, mode="timeslice")
    b = builder.write(tmp_path / "b.json",
                      builder.document([ts, builder.result(wide_base, ranks_per_gpu=2, mode="mps")]))
    n = builder.write(tmp_path / "n.json",
                      builder.document([ts, builder.result(wide_new, ranks_per_gpu=2, mode="mps")]))
    c = compare(load_results([b]), load_results([n]))
    assert c.gains.iloc[0]["verdict"] == NOISY and c.noisy == 2  # the mps throughput and its gain
    assert c.gate_failures() == [] and c.gate_failures(fail_on_noisy=True) == ["2 NOISY verdicts (--fail-on-noisy)"]
