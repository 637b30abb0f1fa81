"""summary numbers against values derived by hand from the fixture in conftest.py."""

from __future__ import annotations

import csv
import io
import math
from pathlib import Path

import pytest

from mpsbench_analysis import load_results
from mpsbench_analysis.summary import gain_table, render_summary, summarize


def _row(df, kernel="matmul", size=1024, ranks=1, mode="timeslice"):
    sel = df[(df["kernel"] == kernel) & (df["size"] == size) & (df["ranks_per_gpu"] == ranks) & (df["mode"] == mode)]
    assert len(sel) == 1
    return sel.iloc[0]


def test_summary_numbers_by_hand(sweep_file: Path) -> None:
    df = summarize(load_results([sweep_file]))
    # matmul fp32, size 256, 4 ranks, mps: 4.8 TFLOP/s; timeslice there is 2.4 -> gain 4.8 / 2.4 = 2.0;
    # best single-rank mps throughput of matmul fp32 at any size is 40 (size 4096) -> 4.8 / 40 = 0.12;
    # speedup from the file: 4.8 / 2.0 (its one-rank run) = 2.4
    r = _row(df, size=256, ranks=4, mode="mps")
    assert r["throughput"] == pytest.approx(4.8e12)
    assert r["gain_vs_timeslice"] == pytest.approx(2.0)
    assert r["efficiency"] == pytest.approx(0.12)
    assert r["speedup"] == pytest.approx(2.4)
    # size 4096, 4 ranks, mps: 42 / 40 = 1.05 gain; efficiency 42 / 40 = 1.05
    r = _row(df, size=4096, ranks=4, mode="mps")
    assert r["gain_vs_timeslice"] == pytest.approx(1.05)
    assert r["efficiency"] == pytest.approx(1.05)
    # size 1024, 2 ranks, timeslice: gain against itself 1; efficiency 10.5 / 40 = 0.2625
    r = _row(df, size=1024, ranks=2, mode="timeslice")
    assert r["gain_vs_timeslice"] == pytest.approx(1.0)
    assert r["efficiency"] == pytest.approx(0.2625)
    assert math.isnan(_row(df, size=1024, ranks=1)["speedup"])  # one rank: no speedup in the file
    # mps-qos at 50 %: 11 / 10.5 = 1.047619...; no single-rank mps-qos run -> no efficiency
    r = _row(df, size=1024, ranks=2, mode="mps-qos:50%")
    assert r["gain_vs_timeslice"] == pytest.approx(1.0476190476)
    assert math.isnan(r["efficiency"])
    # nbody size 1024, 4 ranks, mps: 1.3 / 1.0 both for gain and efficiency (best single rank 1.0)
    r = _row(df, kernel="nbody", size=1024, ranks=4, mode="mps")
    assert r["gain_vs_timeslice"] == pytest.approx(1.3)
    assert r["efficiency"] == pytest.approx(1.3)


def test_rows_are_ordered_for_reading(sweep_file: Path) -> None:
    df = summarize(load_results([sweep_file]))
    assert list(df["kernel"].drop_duplicates()) == ["matmul", "nbody"]
    block = df[(df["kernel"] == "matmul") & (df["size"] == 1024) & (df["ranks_per_gpu"] == 2)]
    assert list(block["mode"]) == ["timeslice", "mps", "mps-qos:25%", "mps-qos:50%"]


def test_gain_table_pairs_repetitions(sweep_file: Path) -> None:
    g = gain_table(load_results([sweep_file]))
    # 3 sizes x 3 rank counts for matmul, 2 x 2 for nbody
    assert len(g) == 13
    r = g[(g["kernel"] == "matmul") & (g["size"] == 256) & (g["ranks_per_gpu"] == 2)].iloc[0]
    assert r["gain"] == pytest.approx(1.5)  # 3.3 / 2.2
    # both sides have the same relative spread -> every paired ratio is 1.5
    assert r["gain_samples"] == pytest.approx((1.5,) * 5)


def test_formats(sweep_file: Path) -> None:
    df = summarize(load_results([sweep_file]))
    text = render_summary(df, "table")
    assert "4.80 TFLOP/s" in text and "2.00" in text
    md = render_summary(df, "markdown")
    assert md.splitlines()[0].startswith("| kernel | precision | size | ranks/gpu | mode |")
    assert md.count("\n") == len(df) + 2 + 2  # header, rule, rows, a blank line and the legend
    rows = list(csv.DictReader(io.StringIO(render_summary(df, "csv"))))
    assert len(rows) == len(df)
    hit = [r for r in rows if r["size"] == "256" and r["ranks_per_gpu"] == "4" and r["mode"] == "mps"][0]
    assert float(hit["throughput"]) == pytest.approx(4.8e12) and hit["unit"] == "FLOP/s"


def test_failed_and_unverified_results_stand_out(tmp_path: Path) -> None:
    import builder
    path = builder.write(tmp_path / "f.json", builder.document([
        builder.result([1e12], size=1, status="failed"),
        builder.result([1e12], size=2, verified=False),
        builder.result([1e12], size=3)]))
    lines = render_summary(summarize(load_results([path])), "table").splitlines()
    by_size = {line.split()[2]: line.split() for line in lines[2:] if line}
    assert by_size["1"][5] == "-" and by_size["1"][-1] == "FAILED"  # no throughput for a failed run
    assert by_size["2"][-1] == "NO" and by_size["3"][-1] == "yes"
