"""Every figure kind, as a person sees it: nothing clipped, nothing overlapping, units and GPUs said.

Each case renders all figures of a results set (the real H100 and CPU
fixtures, and synthetic sweeps with 1, 2 or 10 sizes, on 1, 2 or 8 GPUs,
with every combination of modes, farmed applications, latency kernels with
their latency-throughput figures, and mixes with their slowdown heatmaps) and asks
matplotlib where it drew each text (layout_check.py).  The PNGs are written
to $MPSBENCH_TEST_ARTIFACTS/figures/<case>/ when that is set, else to
pytest's tmp dir, so a failing layout can be looked at.
"""

from __future__ import annotations

import os
import re
from pathlib import Path

import matplotlib.pyplot as plt
import numpy as np
from matplotlib.patches import Patch
import pytest

import figure_docs
import layout_check
from conftest import CPU_RUN, H100_SWEEP
from mpsbench_analysis import load_results
from mpsbench_analysis.plots import all_figures
from mpsbench_core.modes import style as mode_style

H100 = H100_SWEEP
CPU = CPU_RUN


def _cases() -> dict[str, object]:
    cases: dict[str, object] = {"h100-fixture": H100, "cpu-fixture": CPU}
    # the sweep: two GPUs, timeslice, mps and streams, one size per kernel
    cases["issue-2gpus-1size"] = figure_docs.sweep(("timeslice", "mps", "streams"), (4096,), devices=2,
                                                   kernels=("matmul", "nbody"))
    for sizes in ((1024,), (512, 8192), tuple(2 ** k for k in range(7, 17))):
        for devices in (1, 2, 8):
            cases[f"{len(sizes)}sizes-{devices}gpus"] = figure_docs.sweep(figure_docs.MODES, sizes, devices=devices)
    for modes in figure_docs.mode_subsets():
        if modes != figure_docs.MODES:  # every mode at 1024 on two GPUs is the case 1sizes-2gpus above
            cases["modes-" + "+".join(modes)] = figure_docs.sweep(modes, (1024,), devices=2)
    for devices in (1, 2, 8):
        cases[f"app-{devices}gpus"] = figure_docs.app_sweep(figure_docs.MODES, devices=devices)
    cases["app-timeslice-only"] = figure_docs.app_sweep(("timeslice",), ranks=(1,))
    one_failed = figure_docs.sweep(("timeslice", "mps"), (1024,), devices=2)
    one_failed["results"][5].update(status="failed", error="kernel launch failed")  # mps at 2 ranks per GPU
    cases["one-failed"] = one_failed
    # schema version 2: a latency kernel's latency-throughput figure, a mix's slowdown heatmap
    for sizes in ((64,), (8, 64, 512)):
        for devices in (1, 8):
            cases[f"latency-{len(sizes)}sizes-{devices}gpus"] = figure_docs.latency_sweep(figure_docs.MODES, sizes,
                                                                                          devices=devices)
    cases["latency-timeslice-one-rank"] = figure_docs.latency_sweep(("timeslice",), (64,), ranks=(1,))
    cases["latency-wide-spread"] = figure_docs.latency_sweep(("timeslice", "mps"), (64,), ranks=(1, 2, 4, 8, 16, 32, 64))
    for modes in (("mps",), ("timeslice", "mps"), figure_docs.MODES):
        cases[f"mix-{len(modes)}modes"] = figure_docs.mix_doc(modes, devices=2 if len(modes) > 1 else 1)
    partial = figure_docs.mix_doc(("timeslice", "mps"))
    del partial["results"][3]  # inference at the mix's total, timeslice: its diagonal cell is n/a
    cases["mix-partial"] = partial
    return cases


CASES = _cases()


def artifact_dir(tmp_path: Path, *parts: str) -> Path:
    """$MPSBENCH_TEST_ARTIFACTS/<parts> when set (kept after the run), else under pytest's tmp dir."""
    root = os.environ.get("MPSBENCH_TEST_ARTIFACTS")
    out = Path(root).joinpath(*parts) if root else tmp_path.joinpath(*parts)
    out.mkdir(parents=True, exist_ok=True)
    return out


def _load(case: str, tmp_path: Path):
    source = CASES[case]
    if isinstance(source, Path):
        return load_results([source])
    return load_results([figure_docs.write(tmp_path / f"{case}.json", source)])


def _gpus_phrase(devices: set[int], device: str = "gpu") -> str:
    word = "GPU" if device == "gpu" else "host"
    n = max(devices)
    return f"{n} {word}" + ("s" if n != 1 else "")


def _legend_colors(fig) -> dict[str, str]:
    """Legend label -> the colour its marker is drawn in."""
    from matplotlib.colors import to_hex
    out = {}
    for legend in fig.legends:
        for handle, text in zip(legend.legend_handles, legend.get_texts()):
            if isinstance(handle, Patch):  # a box: its edge is the solid colour, its fill a tint of it
                color = handle.get_edgecolor()
            else:  # a line, or an errorbar's collection
                color = handle.get_color()
                color = color[0] if not isinstance(color, str) and len(color) and np.iterable(color[0]) else color
            out[text.get_text()] = to_hex(color)
    return out


@pytest.mark.parametrize("case", list(CASES))
def test_figures_are_readable(case: str, tmp_path: Path) -> None:
    rs = _load(case, tmp_path)
    outdir = artifact_dir(tmp_path, "figures", case)
    figures = all_figures(rs)
    try:
        assert figures
        found = []
        for stem, fig in figures:
            bad, words = layout_check.inspect(fig, outdir / f"{stem}.png")
            words = words.replace("\u00a0", " ")
            assert not bad, f"{case}/{stem} ({outdir / stem}.png):\n  " + "\n  ".join(bad)
            kind, kernel, *rest = stem.split("_")
            found.append(kind)
            if kernel == "app":  # an application's figures: throughput_app_NAME
                results = rs.results[(rs.results["kind"] == "app") & (rs.results["kernel"] == rest[0])]
            else:
                results = rs.results[rs.results["kernel"] == kernel]
            # how many GPUs (or hosts) the numbers come from, and the unit of every axis
            assert _gpus_phrase(set(results["devices"]), results["device"].iloc[0]) in words, (stem, words)
            if kind == "throughput":
                assert "aggregate" in words
                for unit in set(results["primary_unit"]):
                    assert re.search(r"\[[kMGTP ]*" + re.escape(unit) + r"\]", words), (stem, unit, words)
            elif kind == "rank-times":
                assert re.search(r"time per (iteration|run) \[(s|ms|µs|ns)\]", words), (stem, words)
            elif kind == "mps-gain":
                assert "mps / timeslice" in words
            elif kind == "latency":
                flat = " ".join(words.split())
                assert "request latency vs throughput" in flat and "p99" in flat and "p50" in flat
                assert re.search(r"aggregate throughput \[[kMGTP ]*request/s\]", words), (stem, words)
                assert re.search(r"request latency \[(s|ms|µs|ns)\]", words), (stem, words)
            elif kind == "slowdown":
                assert "alone / sharing" in " ".join(words.split()) and "sharing with" in words
                tenants = {t["kernel"] for ts in results["tenants"] if ts for t in ts}
                assert all(any(t in w for w in words.split()) for t in tenants), (stem, words)
            if kind in ("throughput", "rank-times", "latency"):
                # one style table: every mode in the colour it has everywhere else
                colors = _legend_colors(fig)
                rows = results
                if kind == "latency":
                    rows = rows[rows["latency_p99_s"].notna() & (rows["status"] == "ok")]
                modes = set(rows["mode_label"])
                assert {label.split(" (")[0] for label in colors} == modes, (stem, colors)
                for label, color in colors.items():
                    assert color == mode_style(label.split(" (")[0]).color.lower(), (stem, label, color)
        per_kernel = rs.results[rs.results["kernel"] != "mix"]
        kernels = len(per_kernel[["kernel", "precision"]].drop_duplicates())
        assert found.count("throughput") == found.count("rank-times") == kernels
        latency = per_kernel[per_kernel["latency_p99_s"].notna()]
        assert found.count("latency") == len(latency[["kernel", "precision", "size"]].drop_duplicates())
        assert found.count("slowdown") == int((rs.results["kernel"] == "mix").any())
    finally:
        for _, fig in figures:
            plt.close(fig)


def test_gpu_count_per_mode_when_files_differ(tmp_path: Path) -> None:
    """timeslice measured on 1 GPU, mps on 2: the legend says which is which, the title does not guess."""
    one = figure_docs.write(tmp_path / "ts.json", figure_docs.sweep(("timeslice",), (1024,), devices=1))
    two = figure_docs.write(tmp_path / "mps.json", figure_docs.sweep(("mps",), (1024,), devices=2))
    rs = load_results([one, two])
    outdir = artifact_dir(tmp_path, "figures", "mixed-gpu-counts")
    figures = all_figures(rs)
    try:
        for stem, fig in figures:
            bad, _ = layout_check.inspect(fig, outdir / f"{stem}.png")
            assert not bad, (stem, bad)
        throughput = dict(figures)["throughput_matmul_fp32"]
        labels = [t.get_text().replace("\u00a0", " ") for legend in throughput.legends for t in legend.get_texts()]
        assert labels == ["timeslice (1 GPU)", "mps (2 GPUs)"]
    finally:
        for _, fig in figures:
            plt.close(fig)


def test_a_kernel_whose_every_result_failed_says_so(tmp_path: Path) -> None:
    doc = figure_docs.sweep(("timeslice", "mps"), (1024,), ranks=(1, 2))
    for record in doc["results"]:  # no one-rank run measured: no speedup over one either (as the writer leaves it)
        record.update(status="failed", error="kernel launch failed", speedup_vs_one_rank_per_gpu=None)
    rs = load_results([figure_docs.write(tmp_path / "failed.json", doc)])
    outdir = artifact_dir(tmp_path, "figures", "all-failed")
    figures = all_figures(rs)
    try:
        assert [stem for stem, _ in figures] == ["throughput_matmul_fp32", "rank-times_matmul_fp32"]
        for stem, fig in figures:
            bad, words = layout_check.inspect(fig, outdir / f"{stem}.png")
            assert not bad, (stem, bad)
            assert "no successful result to plot" in words
    finally:
        for _, fig in figures:
            plt.close(fig)
