"""Energy per unit of work and SM activity (issue 27): read, checked, shown in summary, verdict, compare, plots.

The fixture: conftest's sweep with energy per TFLOP 0.5 J in timeslice and 0.4 J in mps (0.8x), SM activity
40% in timeslice and 80% in mps; its figures are derived from the work of the kept repetitions
(energy_builder), so they agree as the checks require.
"""

from __future__ import annotations

import copy
import math
from pathlib import Path

import pytest

import builder
import energy_builder as eb
from conftest import sweep_results
from fuzzing import run_cli
from mpsbench_analysis import AnalysisError, load_results
from mpsbench_analysis.plots import figure_makers

TFLOP = 1e12
J_TIMESLICE, J_MPS = 0.5 / TFLOP, 0.4 / TFLOP


def metered(per_unit=None, activity=None) -> list[dict]:
    out = []
    for r in sweep_results():
        mps = r["mode"] != "timeslice"
        r = eb.with_energy(r, (per_unit or {}).get(r["mode"], J_MPS if mps else J_TIMESLICE))
        out.append(eb.with_activity(r, (activity or {}).get(r["mode"], 80.0 if mps else 40.0), gpus=2))
    return out


@pytest.fixture
def energy_file(tmp_path: Path) -> Path:
    return builder.write(tmp_path / "energy.json", builder.document(metered()))


def refused(tmp_path: Path, mutate, field: str, message: str) -> None:
    records = metered()
    mutate(records[3])  # matmul 256 mps k=1
    path = builder.write(tmp_path / "bad.json", builder.document(records))
    with pytest.raises(AnalysisError) as exc:
        load_results([path])
    if message in str(exc.value):  # the analysis's own check (energy_consistency.py)
        assert exc.value.field == f"results[3].{field}", str(exc.value)
    else:  # main's schema knows energy and gpu_activity (definitions.energy): it refuses first, in the same object
        schema_says = ("required field is missing", "expected boolean", "expected object", "expected number",
                       "is not of type",
                       "minimum", "maximum", "is not valid under", "should be non-empty", "is not")
        assert any(m in str(exc.value) for m in schema_says), str(exc.value)
        assert exc.value.field.startswith(f"results[3].{field.split('.')[0]}"), str(exc.value)


def test_rows_have_the_figures(energy_file: Path) -> None:
    r = load_results([energy_file]).results
    mps = r[(r["mode_label"] == "mps") & (r["kernel"] == "matmul") & (r["size"] == 256) & (r["ranks_per_gpu"] == 4)]
    row = mps.iloc[0]
    assert (row["energy_available"], row["energy_unit"], row["sm_active"]) == (True, "FLOP", 80.0)
    assert math.isclose(row["joules_per_unit"], J_MPS)
    # joules = 0.4 J/TFLOP x the work: 5 repetitions of 10 iterations x 4 ranks x 2 GFLOP
    assert math.isclose(row["joules"], 0.4 * 5 * 10 * 4 * 2e9 / TFLOP)


def test_summary_shows_energy_per_tflop_and_sm_active(energy_file: Path, capsys) -> None:
    code, out, _ = run_cli(["summary", str(energy_file)])
    assert code == 0
    header = out.splitlines()[0]
    assert "energy/unit" in header and "SM active" in header
    row = next(line for line in out.splitlines() if line.split()[:5] == ["matmul", "fp32", "256", "4", "mps"])
    assert "0.400 J/TFLOP" in row and "80.0%" in row
    code, csv, _ = run_cli(["summary", "--format", "csv", str(energy_file)])
    assert "joules_per_unit" in csv.splitlines()[0] and "sm_active" in csv.splitlines()[0]


def test_no_energy_no_columns(sweep_file: Path) -> None:
    code, out, _ = run_cli(["summary", str(sweep_file)])
    assert code == 0 and "energy/unit" not in out and "SM active" not in out


def test_verdict_adds_the_energy_side(energy_file: Path) -> None:
    code, out, _ = run_cli(["verdict", str(energy_file)])
    first = out.splitlines()[0]
    # matmul: largest gain 4.8 / 2.4 = 2.00x at 256 (k=4); 0.4 / 0.5 = 0.80x at every size
    assert first.endswith("MPS at k=4 (size 256): 2.00x the throughput at 0.80x the energy per TFLOP; energy per "
                          "TFLOP mps/timeslice by size: 256 0.80x, 1024 0.80x, 4096 0.80x"), first


def test_unavailable_energy_reads_as_no_figure(tmp_path: Path) -> None:
    records = [eb.without_energy(r) for r in sweep_results()]
    rs = load_results([builder.write(tmp_path / "cpu.json", builder.document(records))])
    assert rs.results["joules_per_unit"].isna().all() and not rs.results["energy_available"].any()
    assert set(rs.results["energy_reason"]) == {"the CPU device: no GPU energy counter"}


def test_unavailable_energy_is_shown_as_unavailable_with_its_reason(tmp_path: Path) -> None:
    """available: false is no figure and no zero: the cells say unavailable, one line under the table why."""
    records = [eb.without_energy(r) for r in sweep_results()]
    records[0] = eb.without_energy(records[0], "no permission")
    path = builder.write(tmp_path / "cpu.json", builder.document(records))
    code, out, _ = run_cli(["summary", str(path)])
    assert code == 0 and "energy/unit" in out and "SM active" in out
    rows = [line for line in out.splitlines()[1:] if " timeslice " in line or " mps " in line]  # [0]: header
    assert rows and all(line.count("unavailable") == 2 for line in rows), out
    n = len(records)
    assert (f"energy unavailable: no permission (1 result); the CPU device: no GPU energy counter ({n - 1} results). "
            f"SM activity unavailable: no permission (1 result); the CPU device: no GPU energy counter "
            f"({n - 1} results).") in out, out
    assert " 0.0%" not in out and " 0 J" not in out


def test_no_energy_object_no_energy_columns(tmp_path: Path) -> None:
    path = builder.write(tmp_path / "old.json", builder.document(sweep_results()))
    code, out, _ = run_cli(["summary", str(path)])
    assert code == 0 and "energy/unit" not in out and "unavailable" not in out


@pytest.mark.parametrize("mutate, field, message", [
    (lambda r: r["energy"].update(joules=0.0), "energy.joules", "expected a number above 0"),
    (lambda r: r["energy"].update(joules_per_unit=r["energy"]["joules_per_unit"] * 1e12), "energy.joules_per_unit",
     "disagrees with joules / the work"),
    (lambda r: r["energy"].update(mean_power_w=r["energy"]["mean_power_w"] * 2), "energy.mean_power_w",
     "disagrees with joules / the kept window time or span_s"),
    (lambda r: r.update(energy={"available": False}), "energy.reason", "no reason"),
    (lambda r: r.update(energy={"available": False, "reason": "no meter", "joules": 0}), "energy.joules",
     "the figure is not available"),
    (lambda r: r.update(energy={"available": "yes"}), "energy.available", "expected true or false"),
    (lambda r: r.update(energy=[1]), "energy", "expected an object"),
    (lambda r: r["energy"].pop("joules"), "energy.joules", "no joules"),
    (lambda r: r["energy"].update(joules_per_unit=None), "energy.joules_per_unit", "no per_unit_reason"),
    (lambda r: r["energy"].update(work_unit="run"), "energy.work_unit", "does its work in 'FLOP'"),
    (lambda r: r["energy"].update(uncertainty=-1), "energy.uncertainty", "at least 0"),
    (lambda r: r["gpu_activity"].update(sm_active=130.0), "gpu_activity.sm_active", "at most 100"),
    (lambda r: r["gpu_activity"].update(sm_active=99.0), "gpu_activity.sm_active", "a mean lies between"),
    (lambda r: r.update(gpu_activity={"available": True}), "gpu_activity.sm_active", "no figure"),
    (lambda r: r.update(gpu_activity={"available": False, "reason": "x", "sm_active": 0}), "gpu_activity.sm_active",
     "not available"),
])
def test_energy_that_contradicts_itself_is_refused(tmp_path: Path, mutate, field: str, message: str) -> None:
    refused(tmp_path, mutate, field, message)


def test_a_span_other_than_the_windows_is_checked_at_the_repetitions_rates(tmp_path: Path) -> None:
    """Metered over an extra stretch of 2 s: the work is that of 2 s at the repetitions' rates."""
    r = sweep_results()[0]
    samples = r["aggregate"]["flop_per_s"]["samples"]
    joules = 100.0
    ok = copy.deepcopy(r)
    ok["energy"] = {"available": True, "joules": joules, "joules_per_unit": joules / (2.0 * samples[2]),
                    "mean_power_w": 50.0, "span_s": 2.0, "uncertainty": 1.0, "method": "counter"}
    load_results([builder.write(tmp_path / "ok.json", builder.document([ok]))])
    bad = copy.deepcopy(ok)
    bad["energy"]["joules_per_unit"] = joules / (2.0 * max(samples)) * 0.9  # more work than the fastest rate gives
    with pytest.raises(AnalysisError, match="disagrees with joules / the work of the kept repetitions: over span_s"):
        load_results([builder.write(tmp_path / "bad.json", builder.document([bad]))])


def test_compare_notes_more_energy_and_never_fails_the_gate(tmp_path: Path) -> None:
    base = builder.write(tmp_path / "base.json", builder.document(metered()))
    worse = metered(per_unit={"mps": J_MPS * 1.2})  # +20% per TFLOP in mps, same throughput
    new = builder.write(tmp_path / "new.json", builder.document(worse))
    code, out, _ = run_cli(["compare", str(base), str(new)])
    assert code == 0 and out.rstrip().endswith("gate: pass (exit 0)"), out
    assert "energy per unit of work (notes, never fail the gate" in out
    notes = [line for line in out.splitlines() if "more energy per unit of work" in line]
    assert len(notes) == 13 and all("0.400 J/TFLOP -> 0.480 J/TFLOP" in n and "+20.0%" in n for n in notes), notes
    gone = [eb.without_energy(r, "no mpsbench-meter") if r["mode"] == "mps" else r for r in metered()]
    code, out, _ = run_cli(["compare", str(base), str(builder.write(tmp_path / "gone.json", builder.document(gone)))])
    assert code == 0 and out.count("no energy figure in NEW: no mpsbench-meter") == 13, out
    code, out, _ = run_cli(["compare", str(base), str(base)])
    assert "energy per unit of work" not in out


def test_figures_of_energy_and_sm_activity(energy_file: Path, sweep_file: Path) -> None:
    stems = [stem for stem, _ in figure_makers(load_results([energy_file]))]
    assert {"energy_matmul_fp32", "sm-active_matmul_fp32", "energy_nbody_fp32", "sm-active_nbody_fp32"} <= set(stems)
    assert not [s for s, _ in figure_makers(load_results([sweep_file])) if s.startswith(("energy", "sm-active"))]
    import matplotlib.pyplot as plt
    from mpsbench_core.modes import style
    rs = load_results([energy_file])
    fig = dict(figure_makers(rs))["energy_matmul_fp32"]()
    try:
        ax = fig.axes[0]
        assert ax.get_ylabel() == "energy per unit of work [J/TFLOP]"
        lines = {line.get_label(): line for line in ax.get_lines()}
        assert lines["mps"].get_color() == style("mps").color and lines["mps"].get_marker() == style("mps").marker
        assert list(lines["mps"].get_ydata()) == pytest.approx([0.4, 0.4, 0.4])
    finally:
        plt.close(fig)
    fig = dict(figure_makers(rs))["sm-active_nbody_fp32"]()
    try:
        assert list(fig.axes[0].get_lines()[0].get_ydata()) == [40.0, 40.0]  # timeslice first, at k = 1, 4
        assert fig.axes[0].get_ylim() == (0.0, 100.0)
    finally:
        plt.close(fig)


def test_mpsbench_energy_power_times_kept_windows_over_a_longer_span(tmp_path: Path) -> None:
    """As the engine writes it (harness/results/energy_record.cpp): joules = mean power x the kept window time,
    span_s the (longer) metered span, unit "J/FLOP".  0.5 pJ/FLOP is 0.5 J/TFLOP."""
    records = []
    for r in sweep_results():
        r = eb.with_energy(r, 0.5e-12)
        e = r["energy"]
        e["span_s"] = 1.5 + 3 * math.fsum(r["window_s"])  # metered beyond the windows: power x span != joules
        e["unit"] = "J/FLOP"
        records.append(r)
    rs = load_results([builder.write(tmp_path / "engine.json", builder.document(records))])
    assert set(rs.results["energy_unit"]) == {"FLOP"}
    code, out, _ = run_cli(["summary", str(tmp_path / "engine.json")])
    assert code == 0 and "0.5 J/TFLOP" in out.replace("0.500 J/TFLOP", "0.5 J/TFLOP"), out
    bad = copy.deepcopy(records)
    bad[0]["energy"]["mean_power_w"] *= 1.5  # neither joules / windows nor joules / span
    with pytest.raises(AnalysisError) as exc:
        load_results([builder.write(tmp_path / "bad.json", builder.document(bad))])
    assert exc.value.field == "results[0].energy.mean_power_w", str(exc.value)


def _app(mode: str, k: int, method: str, joules: float, rate: float = 1500.0, **energy) -> dict:
    """md at k copies per GPU measured in its own unit (ns/day: rate per copy), its energy as the sweep writes it
    since issue 36 (core app_energy.py): 10 runs per copy and repetition, 3 repetitions."""
    r = eb.own_figure(builder.app_result([k, k, k], mode, k, name="md"), [[rate] * 3 for _ in range(k)],
                      method=method)
    r["energy"] = {"available": True, "joules": joules, "mean_power_w": joules / 30.0, "span_s": 30.0,
                   "uncertainty": 1.0, "method": "counter", "work_unit": "ns", **energy}
    return r


@pytest.mark.usefixtures("sweep_schema")
def test_an_applications_work_and_joules_per_run_are_checked_exactly(tmp_path: Path) -> None:
    """Issue 36: the sweep writes the work done in the metered spans; joules_per_unit is joules over it, and
    joules_per_run joules over the runs counted, the core definitions (app_energy.per_unit)."""
    runs = 10 * 2 * 3
    ok = [_app("timeslice", 1, "progress", 600.0, work=300.0, joules_per_unit=2.0, joules_per_run=None),
          _app("mps", 2, "metric", 900.0, joules_per_unit=None, per_unit_reason="span unknown",
               joules_per_run=900.0 / runs, work_unit="ns")]
    load_results([builder.write(tmp_path / "ok.json", builder.document(ok))])
    for i, field, value, message in ((0, "joules_per_unit", 2.5, "core app_energy.per_unit(joules, work)"),
                                     (1, "joules_per_run", 900.0 / (runs - 1), "the runs counted")):
        bad = copy.deepcopy(ok)
        bad[i]["energy"][field] = value
        with pytest.raises(AnalysisError, match=message.replace("(", r"\(").replace(")", r"\)")) as exc:
            load_results([builder.write(tmp_path / "bad.json", builder.document(bad))])
        assert exc.value.field == f"results[{i}].energy.{field}"


@pytest.mark.usefixtures("sweep_schema")
def test_a_programs_own_rate_is_never_given_a_joules_per_unit(tmp_path: Path) -> None:
    """--app-metric: J per run, the one energy per work the sweep can measure; a J/unit a file before issue 36
    wrote (the rate times the whole window) is read as no figure, with the reason."""
    runs = [10 * k * 3 for k in (1, 2)]
    now = [_app("timeslice", 1, "metric", 600.0, joules_per_unit=None, per_unit_reason="x", joules_per_run=600.0 / runs[0]),
           _app("mps", 2, "metric", 900.0, joules_per_unit=None, per_unit_reason="x", joules_per_run=900.0 / runs[1])]
    rs = load_results([builder.write(tmp_path / "now.json", builder.document(now))])
    assert list(rs.results["energy_unit"]) == ["run", "run"]
    assert list(rs.results["joules_per_unit"]) == pytest.approx([600.0 / 30, 900.0 / 60])
    code, out, _ = run_cli(["summary", str(tmp_path / "now.json")])
    assert code == 0 and "20.0 J/run" in out and "15.0 J/run" in out, out
    before = [_app("timeslice", 1, "metric", 600.0, joules_per_unit=600.0 / (1500.0 * 30 / 86400)),
              _app("mps", 2, "metric", 900.0, joules_per_unit=900.0 / (3000.0 * 30 / 86400))]
    path = builder.write(tmp_path / "before.json", builder.document(before))
    rs = load_results([path])
    assert rs.results["joules_per_unit"].isna().all() and list(rs.results["energy_available"]) == [True, True]
    code, out, _ = run_cli(["summary", str(path)])
    rows = [line for line in out.splitlines() if line.startswith("md ")]
    assert code == 0 and "J/ns" not in out and all(" unavailable " in row for row in rows), out
    assert "energy per unit of work unavailable: --app-metric: the program's rate was measured over a stretch" in out
    code, out, _ = run_cli(["verdict", str(path)])
    assert code == 0 and "energy" not in out, out


@pytest.mark.usefixtures("sweep_schema")
def test_one_unit_of_work_is_named_alike_in_every_line(tmp_path: Path) -> None:
    """Issue 36: "J/steps" beside "steps/s". A file that wrote work_unit "steps" reads as "step", as a newer one
    writes it: one name, one form, in the tables, the verdict and compare."""
    def steps(mode: str, k: int, per_unit: float, unit: str) -> dict:
        r = _app(mode, k, "progress", per_unit * 1000.0, 3000.0 if mode == "mps" else 1500.0, work=1000.0,
                 joules_per_unit=per_unit, work_unit=unit)
        r["primary_unit"] = r["app"]["metric"]["unit"] = "steps/s"
        return r
    old = builder.write(tmp_path / "old.json", builder.document([steps("timeslice", 2, 2.0, "steps"),
                                                                  steps("mps", 2, 1.0, "steps")]))
    new = builder.write(tmp_path / "new.json", builder.document([steps("timeslice", 2, 2.0, "step"),
                                                                  steps("mps", 2, 1.5, "step")]))
    assert set(load_results([old]).results["energy_unit"]) == {"step"}
    code, out, _ = run_cli(["summary", str(old)])
    assert "2.00 J/step" in out and "J/steps" not in out, out
    code, out, _ = run_cli(["verdict", str(old)])
    assert "the energy per step" in out and "per steps" not in out, out
    code, out, _ = run_cli(["compare", str(old), str(new)])
    assert "1.00 J/step -> 1.50 J/step" in out, out
