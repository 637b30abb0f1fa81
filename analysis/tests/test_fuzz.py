"""Every subcommand on thousands of seeded mutations of real results files.

The promise under test: whatever the file holds, the CLI answers with exit
0 or 2 (compare: 0, 1 or 2) and a one-line error, never an "internal error"
or a traceback; and compare never passes its gate (exit 0) when NEW holds a
corrupted measured value.  Seeds are fixed, so a failure names a
reproducible mutation.  Mutations are cheap for the fast subcommands
(summary, compare, export, crossover) and fewer for those that render
figures (plot, report).
"""

from __future__ import annotations

import contextlib
import io
import json
from pathlib import Path

import pytest

import fuzzing
from fuzzing import Mutator, cli_problem as _problem, run_cli as _cli
from mpsbench_analysis import AnalysisError, load_results

#: every command of the fuzz parses its arguments with one parser (fuzzing.one_parser)
pytestmark = pytest.mark.usefixtures("one_parser")

SUMMARY_MUTATIONS = 1400
COMPARE_MUTATIONS = 450  # each side
EXPORT_MUTATIONS = 200
CROSSOVER_MUTATIONS = 200
PLOT_MUTATIONS = 8
REPORT_MUTATIONS = 8

BASES = {"cpu": fuzzing.trimmed_cpu, "sweep": fuzzing.trimmed_sweep}


@pytest.fixture(scope="module")
def mutators() -> dict[str, Mutator]:
    return {name: Mutator(build()) for name, build in BASES.items()}


@pytest.fixture(scope="module")
def base_files(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    folder = tmp_path_factory.mktemp("bases")
    out = {}
    for name, build in BASES.items():
        out[name] = folder / f"{name}.json"
        out[name].write_text(json.dumps(build(), indent=1))
    return out


def _run_all(mutator: Mutator, seeds: range, tmp_path: Path, argv, allowed=(0, 2)) -> list[str]:
    """Runs ``argv(path)`` on each seed's mutation; returns what went wrong, one line per seed."""
    failures = []
    for seed in seeds:
        mutation = mutator.mutation(seed)
        path = fuzzing.write(mutation, tmp_path / f"m{seed}.json")
        code, _, err = _cli(argv(path))
        why = _problem(code, err, allowed)
        if why:
            failures.append(f"seed {seed} ({mutation.describe()}): {why}")
    return failures


def _assert_none(failures: list[str]) -> None:
    assert not failures, f"{len(failures)} failures, e.g.:\n" + "\n".join(failures[:15])


def _both(count: int) -> list[tuple[str, range]]:
    """Splits ``count`` seeds between the two base documents."""
    half = count // 2
    return [("cpu", range(half)), ("sweep", range(half, count))]


def test_fuzz_summary(mutators: dict[str, Mutator], tmp_path: Path) -> None:
    failures = []
    for base, seeds in _both(SUMMARY_MUTATIONS):
        failures += _run_all(mutators[base], seeds, tmp_path, lambda p: ["summary", str(p)])
    _assert_none(failures)


@pytest.mark.usefixtures("shared_loads")
def test_fuzz_compare_new(mutators: dict[str, Mutator], base_files: dict[str, Path], tmp_path: Path) -> None:
    failures = []
    corrupted = 0
    for base, seeds in _both(COMPARE_MUTATIONS):
        for seed in seeds:
            mutation = mutators[base].mutation(seed)
            path = fuzzing.write(mutation, tmp_path / f"m{seed}.json")
            code, out, err = _cli(["compare", str(base_files[base]), str(path)])
            why = _problem(code, err, (0, 1, 2))
            if not why and mutation.corrupts_measurement:
                corrupted += 1
                if code == 0:
                    why = f"gate passed on a corrupted NEW: {out.strip().splitlines()[-1]}"
            if why:
                failures.append(f"seed {seed} ({mutation.describe()}): {why}")
    _assert_none(failures)
    assert corrupted > COMPARE_MUTATIONS // 10  # the gate property was exercised, not skipped


@pytest.mark.usefixtures("shared_loads")
def test_fuzz_compare_base(mutators: dict[str, Mutator], base_files: dict[str, Path], tmp_path: Path) -> None:
    failures = []
    for base, seeds in _both(COMPARE_MUTATIONS):
        failures += _run_all(mutators[base], range(seeds.start + 10**6, seeds.stop + 10**6), tmp_path,
                             lambda p, b=base: ["compare", str(p), str(base_files[b])], allowed=(0, 1, 2))
    _assert_none(failures)


def test_fuzz_export(mutators: dict[str, Mutator], tmp_path: Path) -> None:
    failures = []
    for base, seeds in _both(EXPORT_MUTATIONS):
        failures += _run_all(mutators[base], range(seeds.start + 2 * 10**6, seeds.stop + 2 * 10**6), tmp_path,
                             lambda p: ["export", str(p)])
    _assert_none(failures)


def test_fuzz_crossover(mutators: dict[str, Mutator], tmp_path: Path) -> None:
    # only the sweep has mps and timeslice to cross over
    failures = _run_all(mutators["sweep"], range(3 * 10**6, 3 * 10**6 + CROSSOVER_MUTATIONS), tmp_path,
                        lambda p: ["crossover", str(p), "--format", "csv"])
    _assert_none(failures)


def _loading_mutations(mutator: Mutator, count: int, first_seed: int, tmp_path: Path) -> list[tuple[int, Path]]:
    """Mostly mutations that still load, the ones that reach the figures (the others stop at
    validation, which the fast subcommands cover), and a few that do not."""
    out: list[tuple[int, Path]] = []
    refused = 0
    seed = first_seed
    while len(out) < count:
        path = fuzzing.write(mutator.mutation(seed), tmp_path / f"m{seed}.json")
        try:
            with contextlib.redirect_stderr(io.StringIO()):
                load_results([path])
            out.append((seed, path))
        except AnalysisError:
            if refused < count // 4:
                refused += 1
                out.append((seed, path))
        seed += 1
    return out


@pytest.mark.usefixtures("shared_loads")
def test_fuzz_plot(mutators: dict[str, Mutator], tmp_path: Path) -> None:
    failures = []
    for seed, path in _loading_mutations(mutators["cpu"], PLOT_MUTATIONS, 4 * 10**6, tmp_path):
        code, _, err = _cli(["plot", str(path), "--outdir", str(tmp_path / "plots"), "--formats", "png"])
        why = _problem(code, err, (0, 2))
        if why:
            failures.append(f"seed {seed} ({mutators['cpu'].mutation(seed).describe()}): {why}")
    _assert_none(failures)


@pytest.mark.usefixtures("shared_loads")
def test_fuzz_report(mutators: dict[str, Mutator], tmp_path: Path) -> None:
    failures = []
    for seed, path in _loading_mutations(mutators["sweep"], REPORT_MUTATIONS, 5 * 10**6, tmp_path):
        code, _, err = _cli(["report", str(path), "-o", str(tmp_path / "r.html")])
        why = _problem(code, err, (0, 2))
        if why:
            failures.append(f"seed {seed} ({mutators['sweep'].mutation(seed).describe()}): {why}")
    _assert_none(failures)


def test_mutations_are_reproducible_and_varied(mutators: dict[str, Mutator]) -> None:
    first = [mutators["cpu"].mutation(seed) for seed in range(400)]
    again = [mutators["cpu"].mutation(seed) for seed in range(400)]
    assert [m.text for m in first] == [m.text for m in again]
    assert {m.kind for m in first} == set(fuzzing.KINDS) | set(fuzzing.TEXT_KINDS)
    assert sum(m.text != mutators["cpu"].text for m in first) > 0.95 * len(first)
