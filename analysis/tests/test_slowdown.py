"""The slowdown of mixed tenants (slowdown.py) against values worked out by hand.

builder.mix_sweep is what ``mpsbench --mix matmul/fp32/2048:2,inference/fp16/64:2``
writes per mode; its docstring has the numbers used here.
"""

from __future__ import annotations

import copy
import json
import math
from pathlib import Path

import numpy as np
import pytest

import builder
from mpsbench_analysis import load_results
from mpsbench_analysis.cli import main
from mpsbench_analysis.report import build_report
from mpsbench_analysis.slowdown import (Tenant, self_slowdown, slowdown, slowdown_matrices, slowdown_matrix,
                                        slowdown_table)
from mpsbench_analysis.summary import render_summary, summarize

MM = "matmul/fp32/2048:2"
INF = "inference/fp16/64[hidden=2048,layers=4]:2"


def test_arithmetic_by_hand() -> None:
    assert slowdown(20.0, 12.0) == pytest.approx(5 / 3)  # alone 20, sharing 12
    assert slowdown(10.0, 10.0) == 1.0
    assert slowdown(8.0, 10.0) == pytest.approx(0.8)  # faster when sharing: below 1
    for alone, shared in ((None, 1.0), (1.0, None), (1.0, 0.0), (math.nan, 1.0), (1.0, -2.0)):
        assert math.isnan(slowdown(alone, shared))
    # the diagonal: 2 of 4 ranks per GPU, the homogeneous record at 4 reached 22 -> its share 22 * 2 / 4 = 11
    assert self_slowdown(20.0, 22.0, 2, 4) == pytest.approx(20 / 11)
    # 1 of 3 ranks: 30 * 1 / 3 = 10 -> 15 / 10
    assert self_slowdown(15.0, 30.0, 1, 3) == pytest.approx(1.5)
    # a tenant that shares with itself as well as it runs alone (perfect scaling): 1
    assert self_slowdown(10.0, 20.0, 2, 4) == pytest.approx(1.0)
    assert math.isnan(self_slowdown(10.0, None, 2, 4)) and math.isnan(self_slowdown(10.0, 20.0, 0, 4))


def test_tenant_labels() -> None:
    t = Tenant.of({"kernel": "inference", "precision": "fp16", "size": 64, "params": {"layers": 4, "hidden": 2048},
                   "ranks_per_gpu": 2})
    assert t.label == INF  # params sorted by name
    assert Tenant.of({"kernel": "matmul", "precision": "fp32", "size": 2048, "params": {},
                      "ranks_per_gpu": 2}).label == MM


@pytest.fixture
def mix_file(tmp_path: Path) -> Path:
    return builder.write(tmp_path / "mix.json", builder.document(builder.mix_sweep()))


def _cell(table, mode: str, victim: str, co: str):
    sel = table[(table["mode"] == mode) & (table["victim"] == victim) & (table["co_runner"] == co)]
    assert len(sel) == 1, (mode, victim, co)
    return sel.iloc[0]


def test_table_by_hand(mix_file: Path) -> None:
    table = slowdown_table(load_results([mix_file]))
    assert len(table) == 8  # 2 modes x 2 tenants x (next to the other, next to itself)
    # timeslice: matmul alone at 2 ranks 20 TFLOP/s, in the mix 12 -> 20 / 12
    row = _cell(table, "timeslice", MM, INF)
    assert row["kind"] == "mix" and row["slowdown"] == pytest.approx(5 / 3)
    assert row["alone"] == pytest.approx(20e12) and row["shared"] == pytest.approx(12e12)
    assert row["alone_source"] == "record" and row["file_slowdown"] == pytest.approx(5 / 3)
    # matmul with itself: 20 / (22 * 2 / 4) = 1.818...
    row = _cell(table, "timeslice", MM, MM)
    assert row["kind"] == "self" and row["slowdown"] == pytest.approx(20 / 11) and row["shared"] == pytest.approx(11e12)
    # inference: 4000 / 1600 = 2.5 next to matmul, 4000 / (4400 / 2) = 1.818... next to itself
    assert _cell(table, "timeslice", INF, MM)["slowdown"] == pytest.approx(2.5)
    assert _cell(table, "timeslice", INF, INF)["slowdown"] == pytest.approx(4000 / 2200)
    # mps: 20 / 16, 20 / 13, 4000 / 3000, 4000 / 3000
    assert _cell(table, "mps", MM, INF)["slowdown"] == pytest.approx(1.25)
    assert _cell(table, "mps", MM, MM)["slowdown"] == pytest.approx(20 / 13)
    assert _cell(table, "mps", INF, MM)["slowdown"] == pytest.approx(4 / 3)
    assert _cell(table, "mps", INF, INF)["slowdown"] == pytest.approx(4 / 3)
    # the p99 ratio of inference next to matmul: its p50 went 1 ms -> 4 ms with the same tail shape -> 4
    assert _cell(table, "timeslice", INF, MM)["latency_p99_ratio"] == pytest.approx(4.0)
    assert math.isnan(_cell(table, "timeslice", MM, INF)["latency_p99_ratio"])  # matmul has no latency


def test_matrix_rows_are_victims_columns_co_runners(mix_file: Path) -> None:
    table = slowdown_table(load_results([mix_file]))
    labels, grid = slowdown_matrix(table, "timeslice")
    assert labels == [MM, INF]  # the --mix order
    expected = np.array([[20 / 11, 5 / 3], [2.5, 4000 / 2200]])
    np.testing.assert_allclose(grid, expected)
    matrices = slowdown_matrices(table)
    assert list(matrices) == ["timeslice", "mps"]
    np.testing.assert_allclose(matrices["mps"][1], [[20 / 13, 1.25], [4 / 3, 4 / 3]])


def test_alone_from_the_tenant_when_its_record_is_missing(tmp_path: Path) -> None:
    records = builder.mix_sweep(("mps",))
    # [matmul alone, inference alone, matmul at 4, inference at 4, mix]
    del records[3]  # inference at 4 ranks per GPU: no diagonal for inference
    del records[0]  # matmul alone at 2 ranks per GPU: the tenant's alone_throughput stands in
    rs = load_results([builder.write(tmp_path / "m.json", builder.document(records))])
    table = slowdown_table(rs)
    row = _cell(table, "mps", MM, INF)
    assert row["alone_source"] == "tenant" and row["slowdown"] == pytest.approx(1.25)
    assert _cell(table, "mps", MM, MM)["slowdown"] == pytest.approx(20 / 13)
    assert table[(table["victim"] == INF) & (table["kind"] == "self")].empty
    labels, grid = slowdown_matrix(table, "mps")
    assert math.isnan(grid[labels.index(INF), labels.index(INF)])  # not measured: n/a in the heatmap


def test_failed_mix_and_no_mix_give_no_rows(tmp_path: Path) -> None:
    records = builder.mix_sweep(("timeslice",))
    mix = records[-1]
    mix.update(status="failed", error="rank 3 on host h: cudaMalloc failed: out of memory", tenants=[], ranks=[],
               window_s=[], aggregate=None, aggregate_cv=None, jain_fairness=None, max_rel_error=None,
               verified=False, iterations_per_repetition=None, work_per_iteration=None, primary_unit=None)
    rs = load_results([builder.write(tmp_path / "f.json", builder.document(records))])
    assert slowdown_table(rs).empty and slowdown_matrices(slowdown_table(rs)) == {}
    plain = load_results([builder.write(tmp_path / "p.json", builder.document([builder.result([1e12])]))])
    assert slowdown_table(plain).empty


def test_three_tenants_are_in_the_table_not_the_matrix(tmp_path: Path) -> None:
    records = builder.mix_sweep(("mps",))
    mix = copy.deepcopy(records[-1])
    third = builder.tenant("matmul", "fp32", 512, 1, builder.flat(5e12), "FLOP/s", "flop_per_s", alone=10e12)
    tenants = mix["tenants"] + [third]
    records[-1] = builder.mix_result(tenants, builder.flat(30e12), mode="mps")
    rs = load_results([builder.write(tmp_path / "three.json", builder.document(records))])
    table = slowdown_table(rs)
    row = _cell(table, "mps", "matmul/fp32/512:1", f"{MM} + {INF}")
    assert row["kind"] == "mix-n" and row["slowdown"] == pytest.approx(2.0)  # alone 10 (the tenant's) / 5
    labels, _ = slowdown_matrix(table, "mps")
    assert "matmul/fp32/512:1" not in labels


def test_summary_and_report_show_the_table(mix_file: Path) -> None:
    rs = load_results([mix_file])
    text = render_summary(summarize(rs), "table", slowdown_table(rs))
    assert "slowdown of mixed tenants:" in text
    line = next(x for x in text.splitlines() if x.startswith("timeslice") and "2.50" in x)
    assert INF in line and MM in line
    data = json.loads(render_summary(summarize(rs), "json", slowdown_table(rs)))
    assert len(data["slowdown"]) == 8 and "alone" in data["slowdown_legend"]
    html = build_report(rs)
    assert 'id="slowdown"' in html and "Slowdown of mixed tenants" in html and 'id="slowdown_mix"' in html
    # the mix's own row: its aggregate, no fairness (its tenants' ranks do different work)
    mix = summarize(rs)
    mix = mix[mix["kernel"] == "mix"]
    assert len(mix) == 2 and mix["jain_fairness"].isna().all()


def test_cli_summary_csv_keeps_one_table(mix_file: Path, capsys) -> None:
    assert main(["summary", str(mix_file), "--format", "csv"]) == 0
    out = capsys.readouterr().out
    assert "slowdown" not in out.splitlines()[0] and len(out.splitlines()) == 1 + 10
    assert main(["summary", str(mix_file)]) == 0
    assert "slowdown of mixed tenants:" in capsys.readouterr().out
