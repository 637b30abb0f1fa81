"""Plots, the HTML report and the Google Benchmark export."""

from __future__ import annotations

import base64
import json
import re
from pathlib import Path

import pytest

import builder
from conftest import DATA_FILES, RECORDED_REPORTS, recorded_report, recorded_results
from mpsbench_analysis import load_results
from mpsbench_analysis.export import to_gbench
from mpsbench_analysis.plots import write_plots
from mpsbench_analysis.report import build_report

PNG_MAGIC = b"\x89PNG\r\n\x1a\n"


def _check_images(paths: list[Path]) -> None:
    for path in paths:
        data = path.read_bytes()
        assert len(data) > 2000, path
        if path.suffix == ".png":
            assert data.startswith(PNG_MAGIC), path
        else:
            assert b"<svg" in data[:2000], path


def test_plots_for_a_multi_mode_sweep(sweep_file: Path, tmp_path: Path) -> None:
    paths = write_plots(load_results([sweep_file]), tmp_path / "plots")
    names = sorted(p.name for p in paths)
    # per kernel (matmul, nbody): throughput, gain heatmap, rank times; each PNG and SVG
    assert names == sorted(f"{kind}_{k}_fp32.{ext}" for kind in ("throughput", "mps-gain", "rank-times")
                           for k in ("matmul", "nbody") for ext in ("png", "svg"))
    _check_images(paths)
    svg = (tmp_path / "plots" / "throughput_matmul_fp32.svg").read_text()
    assert "TFLOP/s" in svg and "mps-qos:50%" in svg  # SI-scaled axis, every mode in the legend


@pytest.mark.parametrize("path", DATA_FILES, ids=[p.name for p in DATA_FILES])
def test_plots_for_real_files(path: Path, tmp_path: Path) -> None:
    rs = recorded_results(path)
    paths = write_plots(rs, tmp_path, formats=("png",))
    pairs = len(rs.results[["kernel", "precision"]].drop_duplicates())
    assert sum(p.name.startswith("throughput_") for p in paths) == pairs
    assert sum(p.name.startswith("rank-times_") for p in paths) == pairs
    _check_images(paths)


def test_report_is_self_contained(sweep_file: Path) -> None:
    page = build_report(load_results([sweep_file]))
    assert page.startswith("<!DOCTYPE html>") and page.rstrip().endswith("</html>")
    for words in ("Does MPS pay off?", "Context", "Summary", "The gains behind the verdict", "Plots", "0123456789ab",
                  "node1", "NVIDIA H100 80GB HBM3", "the crossover lies between 1024 and 4096", "4.80 TFLOP/s"):
        assert words in page, words
    images = re.findall(r'<img alt="[^"]*" src="data:image/png;base64,([A-Za-z0-9+/=]+)">', page)
    assert len(images) == 6
    assert all(base64.b64decode(i).startswith(PNG_MAGIC) for i in images)
    assert not re.search(r'(src|href)="(https?:)?//', page)  # nothing fetched when opened


@RECORDED_REPORTS
@pytest.mark.parametrize("path", DATA_FILES, ids=[p.name for p in DATA_FILES])
def test_report_for_real_files(path: Path) -> None:
    rs = recorded_results(path)
    page = recorded_report(path)
    assert next(iter(rs.contexts.values()))["git_commit"][:12] in page
    assert page.count("data:image/png;base64,") >= 2


def test_gbench_export_by_hand(tmp_path: Path) -> None:
    # 2 ranks x 10 iterations x 2e9 FLOP = 4e10 FLOP per window; at 1, 2, 4 TFLOP/s the windows are
    # 0.04, 0.02, 0.01 s, so the time per iteration is 4e6, 2e6, 1e6 ns
    path = builder.write(tmp_path / "r.json", builder.document(
        [builder.result([1e12, 2e12, 4e12], size=512, ranks_per_gpu=2, mode="mps")]))
    doc = to_gbench(load_results([path]))
    entries = doc["benchmarks"]
    assert [e["run_type"] for e in entries] == ["iteration"] * 3 + ["aggregate"] * 3
    first = entries[0]
    assert first["name"] == first["run_name"] == "matmul/fp32/512/ranks:2/mode:mps"
    assert (first["repetitions"], first["repetition_index"], first["threads"], first["iterations"]) == (3, 0, 2, 10)
    assert [e["real_time"] for e in entries[:3]] == pytest.approx([4e6, 2e6, 1e6])
    assert entries[0]["cpu_time"] == entries[0]["real_time"] and first["time_unit"] == "ns"
    assert [e["flop_per_second"] for e in entries[:3]] == pytest.approx([1e12, 2e12, 4e12])
    # bytes: 1e7 per 2e9 FLOP -> 1/200 of the FLOP rate
    assert entries[2]["bytes_per_second"] == pytest.approx(2e10)
    aggs = {e["aggregate_name"]: e for e in entries[3:]}
    assert aggs["median"]["name"] == "matmul/fp32/512/ranks:2/mode:mps_median"
    assert aggs["median"]["real_time"] == pytest.approx(2e6)
    assert aggs["mean"]["real_time"] == pytest.approx(7e6 / 3)
    # deviations from 7/3 (in 1e6 ns): 5/3, -1/3, -4/3 -> sum of squares 42/9, / 2 -> 7/3
    assert aggs["stddev"]["real_time"] == pytest.approx((7 / 3) ** 0.5 * 1e6)
    assert doc["context"]["date"] == "2026-11-21 12:00:00+00:00"


@pytest.mark.parametrize("path", DATA_FILES, ids=[p.name for p in DATA_FILES])
def test_gbench_export_of_real_files(path: Path) -> None:
    rs = load_results([path])
    doc = json.loads(json.dumps(to_gbench(rs)))  # plain JSON types only
    reps = sum(len(w) for w in rs.results["window_s"])
    assert len(doc["benchmarks"]) == reps + 3 * len(rs.results)
    names = {e["run_name"] for e in doc["benchmarks"]}
    assert len(names) == len(rs.results)  # one family per configuration
