"""A farmed program measured in its own unit (issue 26): tables, verdicts, the report and plots speak it.

The fixture, hand-computed: md, a molecular-dynamics program printing ns/day, 3 repetitions.
  timeslice: 1 copy 1,500 ns/day; 8 copies of 98 each = 784 ns/day
  mps:       1 copy 1,470 ns/day; 8 copies of 735.25 each = 5,882 ns/day
MPS at 8 copies: 5,882 / 1,500 = 3.92x one copy alone, 5,882 / 784 = 7.50x time slicing.
Start-up: 1.6 s of a 10 s run (builder runs take window / 10: see energy_builder.own_figure) -> 16%.
"""

from __future__ import annotations

import copy
from pathlib import Path

import pytest

import builder
import energy_builder as eb
from fuzzing import run_cli
from mpsbench_analysis import AnalysisError, load_results
from mpsbench_analysis.report import build_report

pytestmark = pytest.mark.usefixtures("sweep_schema")

PER_COPY = {("timeslice", 1): 1500.0, ("timeslice", 8): 98.0, ("mps", 1): 1470.0, ("mps", 8): 735.25}


def md(mode: str, k: int, bind: str | None = None, startup: float = 1.6) -> dict:
    # one completed run per copy and window of 10 s: runs/s = k / 10, run time 10 s
    r = builder.app_result([k / 10.0] * 3, mode, k, name="md", runs_per_copy=1)
    rate = PER_COPY[(mode, k)]
    out = eb.own_figure(r, [[rate] * 3 for _ in range(k)], startup=[[startup] * 3 for _ in range(k)])
    if bind is not None:
        out["app"]["bind"] = bind
    return out


def records(bind: str | None = None) -> list[dict]:
    return [md(mode, k, bind) for mode in ("timeslice", "mps") for k in (1, 8)]


@pytest.fixture
def md_file(tmp_path: Path) -> Path:
    return builder.write(tmp_path / "md.json", builder.document(records()))


def test_the_verdict_speaks_the_programs_unit(md_file: Path) -> None:
    code, out, _ = run_cli(["verdict", str(md_file)])
    assert code == 0
    # runs/hour: median of 0.8 runs/s x 3600 = 2,880; start-up 1.6 s of 10 s
    assert out == ("verdict: md: best mps at 8 copies per GPU, 5,882 ns/day, 2,880 runs/hour, start-up 16.0% of a run "
                   "(3.92x one copy alone; 7.50x [7.50x-7.50x] timeslice at 8 per GPU); MPS pays off at 8 copies per "
                   "GPU (gain above 1.1x); does not at 1 copy per GPU; the crossover lies between 1 and 8 copies per "
                   "GPU; MPS gain [95% interval] by copies per GPU: 1 0.98x [0.98x-0.98x], 8 7.50x [7.50x-7.50x]; one "
                   "round: the spread between processes was not measured (mpsbench-sweep --rounds 2 or more)\n"), out


def test_the_summary_shows_the_figure_runs_per_hour_and_start_up(md_file: Path) -> None:
    code, out, _ = run_cli(["summary", str(md_file)])
    assert code == 0
    header = out.splitlines()[0].split()
    assert header[:3] == ["app", "precision", "size"] and "runs/hour" in header and "start-up" in header
    row = next(line for line in out.splitlines() if line.startswith("md") and " mps " in line and " 8 " in line)
    assert "5,882 ns/day" in row and "2,880" in row and "16.0%" in row, row
    code, out, _ = run_cli(["summary", "--format", "json", str(md_file)])
    assert '"metric_method": "progress"' in out and '"startup_share": 0.16' in out


def test_crossover_and_report_use_the_unit(md_file: Path) -> None:
    code, out, _ = run_cli(["crossover", str(md_file)])
    assert code == 0 and "5.88 k ns/day" not in out
    page = build_report(load_results([md_file]))
    assert "5,882 ns/day, 2,880 runs/hour, start-up 16.0% of a run" in page
    assert "mps, 8 copies/GPU" in page and ">7.50x [7.50x-7.50x]<" in page  # the answer table's best and gain


def test_a_binding_is_a_configuration_of_its_own(tmp_path: Path) -> None:
    path = builder.write(tmp_path / "bind.json", builder.document(records() + records("core")))
    code, out, _ = run_cli(["verdict", str(path)])
    lines = out.splitlines()
    assert code == 0 and [line.split(":")[1] for line in lines] == [" md", " md (bind=core)"], out
    rs = load_results([path])
    assert sorted(set(rs.results["params"])) == ["", "bind=core"]


@pytest.mark.parametrize("mutate, field, message", [
    (lambda r: r["aggregate"]["metric_per_s"]["samples"].__setitem__(0, 5000.0), "aggregate.metric_per_s",
     "disagrees with its samples"),
    (lambda r: r["copies"][0]["metric_per_s"]["samples"].__setitem__(0, 700.0), "copies[0].metric_per_s",
     "disagrees with its samples"),
    (lambda r: [c["metric_per_s"].update(samples=[700.0] * 3, median=700.0, min=700.0, max=700.0)
                for c in r["copies"][:1]], "aggregate.metric_per_s.samples[0]", "sum over the copies"),
    (lambda r: r["app"]["metric"].update(copy_spread=0.5), "app.metric.copy_spread", "largest - smallest"),
    (lambda r: r["app"]["metric"].update(jain_fairness=0.5), "app.metric.jain_fairness", "Jain's index"),
    (lambda r: r["app"].update(startup_share=1.5), "app.startup_share", "a share in [0, 1]"),
    (lambda r: r["copies"][1].update(startup_s={"median": 1}), "copies[1].startup_s", "expected a summary"),
    (lambda r: r.update(aggregate_cv=0.5), "aggregate_cv", "aggregate.metric_per_s.samples"),
])
def test_own_figures_that_disagree_are_refused(tmp_path: Path, mutate, field: str, message: str) -> None:
    bad = records()
    mutate(bad[3])  # mps at 8 copies
    path = builder.write(tmp_path / "bad.json", builder.document(bad))
    with pytest.raises(AnalysisError) as exc:
        load_results([path])
    # the schema (main's, with the sweep's app fields) or the analysis's own check refuses it, naming the field
    assert exc.value.field.startswith(f"results[3].{field}"), str(exc.value)
    schema_says = ("maximum", "is not of type", "is not valid under any of the given schemas")
    assert message in str(exc.value) or any(s in str(exc.value) for s in schema_says), str(exc.value)


def test_energy_per_program_unit(tmp_path: Path) -> None:
    """J/ns: joules over the span at the program's rate (ns/day works in days): 5,882 ns/day over 30 s."""
    metered = [eb.with_energy(r, 2.0 if r["mode"] == "mps" else 12.5, span=30.0, unit="ns") for r in records()]
    path = builder.write(tmp_path / "e.json", builder.document(metered))
    rs = load_results([path])
    row = rs.results[(rs.results["mode"] == "mps") & (rs.results["ranks_per_gpu"] == 8)].iloc[0]
    assert row["energy_unit"] == "ns" and row["joules"] == pytest.approx(2.0 * 5882.0 * 30.0 / 86400)
    code, out, _ = run_cli(["verdict", str(path)])
    assert "MPS at 8 copies per GPU: 7.50x the throughput at 0.16x the energy per ns" in out, out
    bad = copy.deepcopy(metered)
    bad[3]["energy"]["work_unit"] = "run"
    with pytest.raises(AnalysisError, match="does its work in 'ns'"):
        load_results([builder.write(tmp_path / "bad.json", builder.document(bad))])
