"""Issue 25's fuzz: application and mix result files, every field mutated, through every analysis command.

Four base files: applications and mixed tenants as version 3 writes them (builder.py), and the recorded
ones of earlier versions (a farmed application of version 1, kernel-app records; a mix of version 2, with
each tenant alone).  The promise: whatever a file holds, every command answers with exit 0 or 2 (compare 0,
1 or 2) and one line on error, never a traceback; compare never passes its gate on a NEW whose measured
values were corrupted; and a file whose derived field disagrees with what it derives from (derived_fields.py)
is refused by every command, so no table, gate or verdict shows a figure no run measured.

Every derived field is changed once (test_every_derived_field_is_checked), and seeded mutations of every
kind (fuzzing.py's, plus such changes) go through the commands in turn, compare on each.
"""

from __future__ import annotations

import contextlib
import io
import random
from pathlib import Path
from typing import Any

import pytest

import builder
import derived_fields
import energy_builder
import figure_docs
import fuzzing
from conftest import APP_RUN, MIX_RUN, read_doc
from fuzzing import Mutation, Mutator, cli_problem, run_cli
from mpsbench_analysis import AnalysisError, load_results

#: every command of the fuzz parses its arguments with one parser (fuzzing.one_parser)
pytestmark = pytest.mark.usefixtures("one_parser")

MUTATIONS = 60        # per base file, each through one command and compare
FIGURE_MUTATIONS = 1  # per base file that loads, through plot and report
COMMANDS = [["summary"], ["verdict"], ["crossover"], ["export"], ["summary", "--format", "json"]]

#: What the fields of applications and mixes hold that the generic fuzz calls measured.
MEASURED = {"copies", "runs_per_repetition", "runs_per_hour", "run_time_s", "tenants", "throughput",
            "alone_throughput", "slowdown", "speedup_vs_one_copy_per_gpu", "speedup_vs_one_rank_per_gpu"}


def app_document() -> dict[str, Any]:
    """An application at 1, 2 and 4 copies per GPU in timeslice, mps and mps-qos (100/k percent), checked by
    --app-check, speedups filled in, and one configuration that failed."""
    records = []
    for mode, values in (("timeslice", (1.0, 1.9, 2.0)), ("mps", (1.0, 2.4, 3.2)), ("mps-qos", (1.0, 2.2, 2.6))):
        for k, v in zip((1, 2, 4), values):
            samples = [v * (1 + 0.01 * ((i * 7) % 5 - 2)) for i in range(5)]
            record = builder.app_result(samples, mode, k, check=True)
            if k > 1:
                record["speedup_vs_one_copy_per_gpu"] = record["aggregate"]["run_per_s"]["median"] / _median(records,
                                                                                                           mode)
            if mode == "mps-qos":
                record["mps_active_thread_percentage"] = 100 // k
            records.append(record)
    failed = builder.app_result([1.0], "mps", 8, check=True)
    failed.update(status="failed", error="copy 3 on node1 exited with status 1", verified=False, primary_unit=None,
                  window_s=[], aggregate=None, aggregate_cv=None, jain_fairness=None, copies=[], repetitions=5)
    failed["app"].update(runs_per_repetition=[], run_time_s=None, runs_per_hour=None,
                         failed_runs=[{"host": "node1", "copy": 3, "repetition": 0, "run": 0, "exit_code": 1,
                                       "signal": None, "stderr_tail": "out of memory"}])
    return builder.document(_metered(records) + [failed])


def _metered(records: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The ok records with energy and GPU activity on two GPUs (issue 27), the others without."""
    return [energy_builder.with_activity(energy_builder.with_energy(r, 50.0 / (1 + r["ranks_per_gpu"])), 60.0, gpus=2)
            if r["status"] == "ok" else energy_builder.without_energy(r, "the configuration failed") for r in records]


def _median(records: list[dict[str, Any]], mode: str) -> float:
    """The median of ``mode`` at one copy per GPU among ``records``."""
    one = next(r for r in records if r["mode"] == mode and r["ranks_per_gpu"] == 1)
    return one["aggregate"]["run_per_s"]["median"]


def mix_document() -> dict[str, Any]:
    doc = figure_docs.mix_doc(("timeslice", "mps"), devices=2)
    doc["results"] = _metered(doc["results"])
    return doc


BASES = {"app-v3": app_document, "mix-v3": mix_document, "app-v1-recorded": lambda: read_doc(APP_RUN),
         "mix-v2-recorded": lambda: read_doc(MIX_RUN)}


class DerivedMutator(Mutator):
    """fuzzing's mutations of every field, and a third of them a change of a derived field that must be
    refused (Mutation kind "inconsistent")."""

    def __init__(self, doc: dict[str, Any]) -> None:
        super().__init__(doc)
        self.doc = doc
        self.derived = derived_fields.derived_paths(doc)
        self.measured = [p for p in self.paths if p[0] == "results" and any(k in MEASURED | fuzzing.MEASURED
                                                                             for k in p[2:])]

    def mutation(self, seed: int) -> Mutation:
        rng = random.Random(seed)
        if rng.random() < 1 / 3:
            path = rng.choice(self.derived)
            text = fuzzing.json.dumps(derived_fields.nudged(self.doc, path))
            return Mutation("inconsistent", path, text, was_number=True)
        return super().mutation(seed)


@pytest.fixture(scope="module")
def bases(tmp_path_factory: pytest.TempPathFactory) -> dict[str, tuple[DerivedMutator, Path]]:
    folder = tmp_path_factory.mktemp("bases")
    out = {}
    for name, build in BASES.items():
        doc = build()
        out[name] = (DerivedMutator(doc), builder.write(folder / f"{name}.json", doc))
    return out


@pytest.mark.usefixtures("shared_loads")
@pytest.mark.parametrize("name", list(BASES))
def test_base_files_load_and_have_derived_fields(bases, name: str) -> None:
    mutator, path = bases[name]
    for command in COMMANDS:
        code, _, err = run_cli([command[0], str(path), *command[1:]])
        assert (code, err) == (0, ""), (command, err)
    assert len(mutator.derived) > 40


@pytest.mark.parametrize("name", list(BASES))
def test_every_derived_field_is_checked(bases, name: str, tmp_path: Path) -> None:
    """Each derived field (one of each, whatever its indices: the fuzz below reaches the others) changed
    alone is refused."""
    mutator, _ = bases[name]
    accepted = []
    for n, path in enumerate(derived_fields.one_of_each(mutator.derived)):
        bad = builder.write(tmp_path / f"d{n}.json", derived_fields.nudged(mutator.doc, path))
        try:
            with contextlib.redirect_stderr(io.StringIO()):
                load_results([bad])
        except AnalysisError:
            continue
        accepted.append(fuzzing.Mutation("inconsistent", path, "").describe())
    assert not accepted, f"{len(accepted)} disagreeing derived fields were accepted:\n" + "\n".join(accepted[:20])


@pytest.mark.usefixtures("shared_loads")
@pytest.mark.parametrize("name", list(BASES))
def test_fuzz_every_command(bases, name: str, tmp_path: Path) -> None:
    mutator, base = bases[name]
    failures = []
    inconsistent = 0
    for seed in range(MUTATIONS):
        mutation = mutator.mutation(seed)
        path = fuzzing.write(mutation, tmp_path / f"m{seed}.json")
        command = COMMANDS[seed % len(COMMANDS)]
        code, _, err = run_cli([command[0], str(path), *command[1:]])
        why = cli_problem(code, err, (0, 2))
        if not why and mutation.kind == "inconsistent" and code != 2:
            why = f"{command[0]} accepted a disagreeing derived field (exit {code})"
        if not why:
            code, out, err = run_cli(["compare", str(base), str(path)])
            why = cli_problem(code, err, (0, 1, 2))
            if not why and code == 0 and (mutation.kind == "inconsistent" or mutation.corrupts_measurement):
                why = f"gate passed: {out.strip().splitlines()[-1]}"
        inconsistent += mutation.kind == "inconsistent"
        if why:
            failures.append(f"seed {seed} ({mutation.describe()}, {command[0]}): {why}")
    assert not failures, f"{len(failures)} failures, e.g.:\n" + "\n".join(failures[:15])
    assert inconsistent > MUTATIONS // 6


@pytest.mark.usefixtures("shared_loads")
@pytest.mark.parametrize("name", ["app-v3", "mix-v3"])
def test_fuzz_figures(bases, name: str, tmp_path: Path) -> None:
    """A few mutations that still load, through plot and report (which draw every column)."""
    mutator, _ = bases[name]
    failures = fuzzing.figure_failures(mutator, 10**6, FIGURE_MUTATIONS, tmp_path)
    assert not failures, "\n".join(failures)
