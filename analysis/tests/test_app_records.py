"""Results of farmed applications (kernel app, mpsbench-sweep --app): no size, no iterations.

The schema admits them, so every command must read them, never fail on them
(their crossover is across copies per GPU instead of sizes).
"""

from __future__ import annotations

import json
from pathlib import Path

import jsonschema
import pytest

import builder
from mpsbench_analysis import load_results
from mpsbench_analysis.cli import main
from mpsbench_analysis.loader import schema

T = 1e12


@pytest.fixture
def app_file(tmp_path: Path) -> Path:
    results = [builder.app_result([1.0, 1.1, 1.2], "timeslice", 1), builder.app_result([2.0, 2.1, 2.2], "timeslice", 2),
               builder.app_result([3.0, 3.1, 3.3], "mps", 2)]
    doc = builder.document(results)
    jsonschema.Draft7Validator(schema()).validate(doc)
    return builder.write(tmp_path / "app.json", doc)


@pytest.mark.parametrize("argv", [["summary"], ["summary", "--format", "csv"], ["export"], ["compare-self"],
                                  ["plot", "--formats", "png"], ["report"]], ids=lambda a: "-".join(a))
def test_every_command_reads_app_results(app_file: Path, tmp_path: Path, capsys, argv: list[str]) -> None:
    if argv == ["compare-self"]:
        argv = ["compare", str(app_file)]
    elif argv[0] == "plot":
        argv += ["--outdir", str(tmp_path / "plots")]
    elif argv[0] == "report":
        argv += ["-o", str(tmp_path / "r.html")]
    code = main([argv[0], str(app_file), *argv[1:]])
    out, err = capsys.readouterr()
    assert code == 0, err
    assert "myapp" in out or argv[0] in ("plot", "report")


def test_app_summary_shows_runs_per_second_without_a_size(app_file: Path, capsys) -> None:
    assert main(["summary", str(app_file)]) == 0
    rows = [line.split() for line in capsys.readouterr().out.splitlines() if line.startswith("app")]
    assert [r[:7] for r in rows] == [["app", "myapp", "-", "1", "timeslice", "1.10", "run/s"],
                                     ["app", "myapp", "-", "2", "timeslice", "2.10", "run/s"],
                                     ["app", "myapp", "-", "2", "mps", "3.10", "run/s"]]


def test_app_export_names_have_no_size(app_file: Path, capsys) -> None:
    assert main(["export", str(app_file)]) == 0
    names = {e["run_name"] for e in json.loads(capsys.readouterr().out)["benchmarks"]}
    assert names == {"app/myapp/ranks:1/mode:timeslice", "app/myapp/ranks:2/mode:timeslice",
                     "app/myapp/ranks:2/mode:mps"}


def test_crossover_of_app_results_is_across_copies_per_gpu(app_file: Path, capsys) -> None:
    # one count in both modes: k = 2, gain 3.1 / 2.1 = 1.476 >= 1.1 (test_app_crossover.py has the rest)
    assert main(["crossover", str(app_file)]) == 0
    out = capsys.readouterr().out
    assert out.startswith("app myapp, across copies per GPU\n  MPS pays off at every measured copies-per-GPU count "
                          "(gain >= 1.1 from 2 to 2 copies per GPU)\n")
    assert "1.476" in out


def test_app_and_kernel_results_together_keep_integer_sizes(app_file: Path, tmp_path: Path) -> None:
    kernel = builder.write(tmp_path / "k.json", builder.document([builder.result([T], size=512)]))
    rs = load_results([kernel, app_file])
    assert list(rs.results["size"]) == [512, None, None, None]
    assert list(rs.ranks["size"])[0] == 512 and isinstance(list(rs.ranks["size"])[0], int)


def test_duplicate_app_configuration_is_refused(tmp_path: Path, capsys) -> None:
    record = builder.app_result([1.0, 1.1, 1.2])
    path = builder.write(tmp_path / "dup.json", builder.document([record, record]))
    assert main(["summary", str(path)]) == 2
    assert "field results[1]: duplicate result (kernel=app, precision=myapp, size=None" in capsys.readouterr().err


@pytest.mark.parametrize("mutate, field, words", [
    (lambda r: r["window_s"].__setitem__(1, 2 * r["window_s"][1]), "results[2].aggregate.item_per_s.samples[1]",
     "disagrees with app.runs_per_repetition[1] / window_s[1]"),
    (lambda r: r["app"]["runs_per_repetition"].pop(), "results[2].app.runs_per_repetition",
     "2 entries, but window_s has 3"),
    (lambda r: r["aggregate"]["flop_per_s"].update(samples=[1.0] * 3, median=1.0, min=1.0, max=1.0),
     "results[2].aggregate.flop_per_s.samples[0]", "disagrees with 0 for kernel app"),
])
def test_corrupted_app_results_fail_compare(app_file: Path, tmp_path: Path, capsys, mutate, field: str,
                                            words: str) -> None:
    doc = json.loads(app_file.read_text())
    mutate(doc["results"][2])
    new = builder.write(tmp_path / "new.json", doc)
    assert main(["compare", str(app_file), str(new)]) == 2
    out, err = capsys.readouterr()
    assert out == "" and err.startswith(f"mpsbench-analyze: error: {new}: field {field}: ") and words in err
