"""Issue 25: the analysis and the verdicts check the records they used to trust.

An application record that claims ``verified`` while listing a failed --app-check, a mix whose tenants
contradict its own name or whose ranks all name one tenant, and any derived field that disagrees with what
it derives from: each is refused with one line by every command (exit 2), never passes compare's gate and
is never the best configuration of a verdict.
"""

from __future__ import annotations

import copy
from pathlib import Path
from typing import Any, Callable

import pytest

import builder
from fuzzing import cli_problem, run_cli
from mpsbench_core.records import Result, results_of
from mpsbench_core.verdict import verdicts

COMMANDS = [["summary"], ["verdict"], ["crossover"], ["export"], ["compare-new"]]


def _apps() -> list[dict[str, Any]]:
    """myapp at 1, 2 and 4 copies per GPU in timeslice and mps, with an --app-check, speedups filled in."""
    out = []
    for mode, values in (("timeslice", (1.0, 1.9, 2.0)), ("mps", (1.0, 2.4, 3.2))):
        for k, v in zip((1, 2, 4), values):
            out.append(builder.app_result(builder.flat(v), mode, k, check=True,
                                          speedup=None if k == 1 else v / values[0]))
    return out


def _refused_everywhere(tmp_path: Path, records: list[dict[str, Any]], field: str, words: str = "") -> None:
    """Every command refuses the file with one line naming ``field`` (and saying ``words``)."""
    good = builder.write(tmp_path / "good.json", builder.document(_apps()))
    bad = builder.write(tmp_path / "bad.json", builder.document(records))
    for command in COMMANDS:
        argv = ["compare", str(good), str(bad)] if command == ["compare-new"] else [command[0], str(bad)]
        code, out, err = run_cli(argv)
        assert code == 2 and cli_problem(code, err, (2,)) is None, (command, code, err)
        assert err.startswith(f"mpsbench-analyze: error: {bad}: field {field}: ") and words in err, (command, err)


def test_the_base_file_is_accepted(tmp_path: Path) -> None:
    path = builder.write(tmp_path / "apps.json", builder.document(_apps()))
    for command in COMMANDS[:-1]:
        code, out, err = run_cli([command[0], str(path)])
        assert (code, err) == (0, ""), command
    code, out, _ = run_cli(["compare", str(path), str(path)])
    assert code == 0 and out.rstrip().endswith("gate: pass (exit 0)")


def _claims_verified_with_a_failed_check(r: dict[str, Any]) -> None:
    """The tester's case: mps at 4 copies (the fastest) failed its check on one run, and says verified."""
    r["app"]["failed_checks"] = [{"host": "node1", "copy": 1, "repetition": 2, "run": 3, "check_exit_code": 1,
                                  "stdout": "wrong answer"}]


def test_verified_app_with_a_failed_check_is_refused(tmp_path: Path) -> None:
    records = _apps()
    _claims_verified_with_a_failed_check(records[5])
    _refused_everywhere(tmp_path, records, "results[5].verified",
                        "true, but app.failed_checks lists 1 failed --app-check run(s)")


def test_verified_app_whose_copy_failed_its_check_is_refused(tmp_path: Path) -> None:
    records = _apps()
    records[5]["copies"][1]["check"].update(ok=False, failed_runs=1)
    _refused_everywhere(tmp_path, records, "results[5].verified", "true, but copies[1].check.ok is false")


def test_a_verdict_never_picks_a_configuration_that_failed_its_check() -> None:
    """Core's own reading (which the sweep's verdict uses on its records) does not count such a record as
    verified either, so the best configuration is the next one."""
    records = _apps()
    _claims_verified_with_a_failed_check(records[5])
    doc = builder.document(records)
    assert not Result.from_json(doc["results"][5]).usable
    (v,) = verdicts(results_of([doc]))
    assert (v.best.first.mode, v.best.first.ranks_per_gpu) == ("mps", 2) and len(v.failed) == 1
    assert v.sentence.startswith("best mps at 2 copies per GPU")


def _mix_records() -> list[dict[str, Any]]:
    return builder.mix_sweep(("mps",))


@pytest.mark.parametrize("mutate, field, words", [
    (lambda m: m.update(precision="matmul/fp32/2048:2,inference/fp16/8:2"), "results[4].precision",
     "names the mix, but its tenants are 'matmul/fp32/2048:2,inference/fp16/64:2'"),
    (lambda m: m["tenants"].reverse(), "results[4].precision", "but its tenants are 'inference/fp16/64:2,matmul"),
    (lambda m: [rank.update(tenant=0) for rank in m["ranks"]], "results[4].tenants[0].ranks_per_gpu",
     "2 ranks per GPU on 1 device(s), but 4 of the record's ranks name this tenant"),
    (lambda m: m["ranks"][1].update(tenant=1), "results[4].tenants[0].ranks_per_gpu",
     "but 1 of the record's ranks name this tenant (2 expected)"),
    (lambda m: m["tenants"][0].update(alone_throughput=m["tenants"][0]["alone_throughput"] * 2,
                                      slowdown=m["tenants"][0]["slowdown"] * 2),
     "results[4].tenants[0].alone_throughput", "but results[0] (the tenant alone at its ranks per GPU, mode mps)"),
    (lambda m: m["tenants"][1].update(slowdown=None), "results[4].tenants[1].slowdown",
     "null, but alone_throughput / throughput.median is"),
])
def test_mix_whose_tenants_contradict_it_is_refused(tmp_path: Path, mutate: Callable, field: str,
                                                     words: str) -> None:
    records = _mix_records()
    mutate(records[4])
    bad = builder.write(tmp_path / "mix.json", builder.document(records))
    for command in ("summary", "verdict", "crossover", "export", "report"):
        argv = [command, str(bad)] + (["-o", str(tmp_path / "r.html")] if command == "report" else [])
        code, _, err = run_cli(argv)
        assert code == 2 and err.startswith(f"mpsbench-analyze: error: {bad}: field {field}: ") and words in err, err


def _nudge(path: tuple) -> Callable[[dict], None]:
    """A change of the value at ``path`` to another valid one: a number x 1.5 (x the path's last item when it
    is a float), an integer + 1, a flag turned."""
    factor = 1.5
    if isinstance(path[-1], float):
        path, factor = path[:-1], path[-1]

    def change(r: dict) -> None:
        node = r
        for part in path[:-1]:
            node = node[part]
        value = node[path[-1]]
        node[path[-1]] = (not value if isinstance(value, bool) else value + 1 if isinstance(value, int)
                          else value * factor)
    return change


@pytest.mark.parametrize("path, field, words", [
    (("app", "runs_per_hour"), "app.runs_per_hour", "disagrees with aggregate.run_per_s.median x 3600"),
    (("aggregate", "run_per_s", "median"), "aggregate.run_per_s.median", "disagrees with its samples"),
    (("aggregate", "run_per_s", "samples", 0), "aggregate.run_per_s.median", "disagrees with its samples"),
    (("app", "runs_per_repetition", 1), "aggregate.run_per_s.samples[1]",
     "disagrees with app.runs_per_repetition[1] / window_s[1]"),
    (("window_s", 2), "aggregate.run_per_s.samples[2]", "disagrees with app.runs_per_repetition[2] / window_s[2]"),
    (("aggregate_cv",), "aggregate_cv", "disagrees with the CV of aggregate.run_per_s.samples"),
    (("jain_fairness", 0.5), "jain_fairness", "Jain's index over copies[].throughput_per_s"),
    (("speedup_vs_one_copy_per_gpu",), "speedup_vs_one_copy_per_gpu", "over that of results[3] (one per GPU)"),
    (("active_ranks",), "copies", "2 entries, but active_ranks is 3"),
    (("copies", 1, "runs"), "copies", "the copies' runs add up to 101, but app.runs_per_repetition to 100"),
    (("copies", 0, "check", "failed_runs"), "copies[0].check.ok", "true, but 1 checked runs failed"),
    (("copies", 0, "check", "ok"), "copies[0].check.ok", "false, but 0 checked runs failed"),
    (("copies", 0, "mps_enabled"), "copies[0].mps_enabled", "false, but mode mps runs MPS clients"),
    (("copies", 1, "copy"), "copies[1].copy", "2, not below active_ranks 2"),
    (("copies", 0, "run_time_s", "median"), "copies[0].run_time_s.median", "disagrees with its samples"),
    (("app", "run_time_s", "p95"), "app.run_time_s.p95", "is above max"),
    (("verified",), "verified", "false, but app.failed_checks lists no failed --app-check run"),
])
def test_every_derived_field_of_an_app_must_agree(tmp_path: Path, path: tuple, field: str, words: str) -> None:
    records = _apps()
    records[4]["aggregate"]["run_per_s"]["samples"] = [2.35, 2.4, 2.45, 2.5, 2.3]  # not flat: a CV to disagree
    records[4] = builder.app_result(records[4]["aggregate"]["run_per_s"]["samples"], "mps", 2, check=True,
                                    speedup=2.4)
    bad = copy.deepcopy(records)
    _nudge(path)(bad[4])
    _refused_everywhere(tmp_path, bad, f"results[4].{field}", words)


def test_a_failed_app_record_shows_no_runs_per_hour(tmp_path: Path) -> None:
    records = _apps()
    failed = records[5]
    failed.update(status="failed", error="copy 1 on node1 exited with status 1", verified=False, primary_unit=None,
                  window_s=[], aggregate=None, aggregate_cv=None, jain_fairness=None, copies=[],
                  speedup_vs_one_copy_per_gpu=None)
    failed["app"].update(runs_per_repetition=[], run_time_s=None)
    _refused_everywhere(tmp_path, records, "results[5].app.runs_per_hour",
                        "but the record measured no runs per second (aggregate is null)")
    failed["app"]["runs_per_hour"] = None
    path = builder.write(tmp_path / "ok.json", builder.document(records))
    code, out, err = run_cli(["verdict", str(path)])
    assert code == 0 and "1 configuration(s) failed" in out and "best mps at 2 copies per GPU" in out
