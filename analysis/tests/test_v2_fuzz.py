"""Seeded mutations of a schema-version-2 file: latency, params, stream bytes/s, --allreduce and a mix.

The promise of test_fuzz.py for the fields version 2 added: whatever the
file holds, every command answers with exit 0 or 2 (compare 0, 1 or 2) and
one error line, never an internal error, and compare never passes its gate
on a NEW whose measured values were corrupted.
"""

from __future__ import annotations

from pathlib import Path

import pytest

import builder
import fuzzing
from fuzzing import Mutator, cli_problem as _problem, run_cli as _cli
from mpsbench_analysis import load_results

#: every command of the fuzz parses its arguments with one parser (fuzzing.one_parser)
pytestmark = pytest.mark.usefixtures("one_parser")

SUMMARY_MUTATIONS = 300
COMPARE_MUTATIONS = 200
FIGURE_MUTATIONS = 3

#: Where version 2 keeps its numbers; half of the mutations go there.
V2_FIELDS = {"latency", "latency_s", "collective", "collective_time_s", "tenants", "tenant", "params"}


def _base() -> dict:
    records = builder.mix_sweep(("timeslice", "mps"))
    records += [builder.stream_result(builder.flat(3e12)),
                builder.with_collective(builder.latency_result(builder.flat(2500.0), 1e-3, ranks_per_gpu=4,
                                                               size=8, mode="mps"))]
    doc = builder.document(records)
    doc["context"]["settings"]["allreduce_bytes"] = 1 << 20
    doc["context"]["mix"] = "matmul/fp32/2048:2,inference/fp16/64:2"
    return doc


class V2Mutator(Mutator):
    def __init__(self, doc: dict) -> None:
        super().__init__(doc)
        inside = [p for p in self.paths if any(part in V2_FIELDS for part in p)]
        self.measured = self.measured + inside  # "measured" paths get half of the mutations


@pytest.fixture(scope="module")
def mutator() -> V2Mutator:
    return V2Mutator(_base())


@pytest.fixture(scope="module")
def base_file(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return builder.write(tmp_path_factory.mktemp("v2") / "base.json", _base())


def test_base_loads_and_has_every_kind(base_file: Path) -> None:
    rs = load_results([base_file])
    assert {"mix", "matmul", "inference", "stream"} <= set(rs.results["kernel"])
    assert rs.results["collective_time_per_iteration_s"].notna().sum() == 1


def test_fuzz_version_2_summary_export_crossover(mutator: V2Mutator, tmp_path: Path) -> None:
    failures = []
    for seed in range(SUMMARY_MUTATIONS):
        mutation = mutator.mutation(seed)
        path = fuzzing.write(mutation, tmp_path / f"m{seed}.json")
        command = (["summary", "--format", "json"], ["export"], ["crossover"], ["summary"])[seed % 4]
        code, _, err = _cli([*command, str(path)])
        why = _problem(code, err, (0, 2))
        if why:
            failures.append(f"seed {seed} ({mutation.describe()}, {command[0]}): {why}")
    assert not failures, f"{len(failures)} failures, e.g.:\n" + "\n".join(failures[:15])


@pytest.mark.usefixtures("shared_loads")
def test_fuzz_version_2_compare(mutator: V2Mutator, base_file: Path, tmp_path: Path) -> None:
    failures = []
    for seed in range(10**6, 10**6 + COMPARE_MUTATIONS):
        mutation = mutator.mutation(seed)
        path = fuzzing.write(mutation, tmp_path / f"m{seed}.json")
        code, out, err = _cli(["compare", str(base_file), str(path)])
        why = _problem(code, err, (0, 1, 2))
        if not why and mutation.corrupts_measurement and code == 0:
            why = f"gate passed on a corrupted NEW: {out.strip().splitlines()[-1]}"
        if not why and seed % 4 == 0:  # and as BASE
            code, _, err = _cli(["compare", str(path), str(base_file)])
            why = _problem(code, err, (0, 1, 2))
        if why:
            failures.append(f"seed {seed} ({mutation.describe()}): {why}")
    assert not failures, f"{len(failures)} failures, e.g.:\n" + "\n".join(failures[:15])


@pytest.mark.usefixtures("shared_loads")
def test_fuzz_version_2_figures(mutator: V2Mutator, tmp_path: Path) -> None:
    """A few mutations that still load, through plot and report (the figures read the new columns)."""
    failures = fuzzing.figure_failures(mutator, 2 * 10**6, FIGURE_MUTATIONS, tmp_path)
    assert not failures, "\n".join(failures)
