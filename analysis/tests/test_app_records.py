"""Results of farmed applications (mpsbench-sweep --app): records of their own kind, no size, no iterations.

Version 3 writes them as kind ``app`` (schema app_result); versions 1 and 2 wrote a kernel ``app`` record
with the application's name in ``precision``, which the analysis reads as the same thing (legacy.py).
Every command reads both, never fails on them, and says the same of the same run in either version.
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
    lines = capsys.readouterr().out.splitlines()
    assert lines[0].split()[:5] == ["app", "precision", "size", "copies/gpu", "mode"]
    rows = [line.split() for line in lines if line.startswith("myapp")]
    assert [r[:7] for r in rows] == [["myapp", "-", "-", "1", "timeslice", "1.10", "run/s"],
                                     ["myapp", "-", "-", "2", "timeslice", "2.10", "run/s"],
                                     ["myapp", "-", "-", "2", "mps", "3.10", "run/s"]]


def _legacy_twin(tmp_path: Path, version: int) -> tuple[Path, Path]:
    """The same three configurations as app records (version 3) and as kernel-app records (version 1 or 2)."""
    runs = [([1.0, 1.1, 1.2], "timeslice", 1), ([2.0, 2.1, 2.2], "timeslice", 2), ([3.0, 3.1, 3.3], "mps", 2)]
    new = builder.document([builder.app_result(*r) for r in runs])
    old = builder.document([builder.legacy_app_result(*r) for r in runs], version=version)
    return builder.write(tmp_path / "v3.json", new), builder.write(tmp_path / f"v{version}.json", old)


@pytest.mark.parametrize("version", [1, 2])
@pytest.mark.parametrize("argv", [["summary"], ["summary", "--format", "csv"], ["summary", "--format", "json"],
                                  ["verdict"], ["crossover"], ["export"]], ids=lambda a: "-".join(a))
def test_version_2_and_version_3_app_files_say_the_same(tmp_path: Path, capsys, version: int, argv: list[str]) -> None:
    new, old = _legacy_twin(tmp_path, version)
    assert main([argv[0], str(new), *argv[1:]]) == 0
    out_new = capsys.readouterr().out
    assert main([argv[0], str(old), *argv[1:]]) == 0
    out_old = capsys.readouterr().out
    if argv[0] == "export":  # the export names its source files
        out_new, out_old = (json.loads(text)["benchmarks"] for text in (out_new, out_old))
    assert out_old == out_new and "myapp" in str(out_new)


def test_version_2_app_record_takes_the_version_3_shape(tmp_path: Path) -> None:
    new, old = _legacy_twin(tmp_path, 2)
    a, b = load_results([new]), load_results([old])
    assert list(b.results["kind"]) == ["app"] * 3 and list(b.results["kernel"]) == ["myapp"] * 3
    assert list(b.results["precision"]) == [""] * 3 and list(b.results["primary_metric"]) == ["run_per_s"] * 3
    columns = ["kind", "kernel", "ranks_per_gpu", "mode_label", "throughput", "verified", "iteration_time_s"]
    assert b.results[columns].equals(a.results[columns])
    assert list(b.ranks["rank"]) == list(a.ranks["rank"])
    assert [r.name for r in b.records()] == ["myapp"] * 3 and {r.kind for r in b.records()} == {"app"}


def test_app_export_names_have_no_size(app_file: Path, capsys) -> None:
    assert main(["export", str(app_file)]) == 0
    names = {e["run_name"] for e in json.loads(capsys.readouterr().out)["benchmarks"]}
    assert names == {"app/myapp/copies:1/mode:timeslice", "app/myapp/copies:2/mode:timeslice",
                     "app/myapp/copies:2/mode:mps"}


def test_crossover_of_app_results_is_across_copies_per_gpu(app_file: Path, capsys) -> None:
    # one count in both modes: k = 2, gain 3.1 / 2.1 = 1.476 > 1.1 (test_app_crossover.py has the rest)
    assert main(["crossover", str(app_file)]) == 0
    out = capsys.readouterr().out
    assert out.startswith("myapp, across copies per GPU\n  best mps at 2 copies per GPU, 11,160 runs/hour (2.82x one "
                          "copy alone; 1.48x [1.48x-1.48x] timeslice at 2 per GPU); MPS pays off at every count "
                          "measured (2 copies per GPU; gain above 1.1x throughout)")
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
    assert ("field results[1]: duplicate result (kind=app, kernel=myapp, size=None, ranks_per_gpu=1, "
            "mode_label=timeslice)") in capsys.readouterr().err


@pytest.mark.parametrize("mutate, field, words", [
    (lambda r: r["window_s"].__setitem__(1, 2 * r["window_s"][1]), "results[2].aggregate.run_per_s.samples[1]",
     "disagrees with app.runs_per_repetition[1] / window_s[1]"),
    (lambda r: r["app"]["runs_per_repetition"].pop(), "results[2].app.runs_per_repetition",
     "2 entries, but window_s has 3"),
    (lambda r: r["app"].update(runs_per_hour=r["app"]["runs_per_hour"] * 2), "results[2].app.runs_per_hour",
     "disagrees with aggregate.run_per_s.median x 3600"),
])
def test_corrupted_app_results_fail_compare(app_file: Path, tmp_path: Path, capsys, mutate, field: str,
                                            words: str) -> None:
    doc = json.loads(app_file.read_text())
    mutate(doc["results"][2])
    new = builder.write(tmp_path / "new.json", doc)
    assert main(["compare", str(app_file), str(new)]) == 2
    out, err = capsys.readouterr()
    assert out == "" and err.startswith(f"mpsbench-analyze: error: {new}: field {field}: ") and words in err


@pytest.mark.parametrize("mutate, field, words", [
    (lambda r: r["window_s"].__setitem__(1, 2 * r["window_s"][1]), "results[2].aggregate.item_per_s.samples[1]",
     "disagrees with app.runs_per_repetition[1] / window_s[1]"),
    (lambda r: r["aggregate"]["flop_per_s"].update(samples=[1.0] * 3, median=1.0, min=1.0, max=1.0),
     "results[2].aggregate.flop_per_s.samples[0]", "but an application's runs have no flop_per_s (0)"),
    (lambda r: r["ranks"][1]["kernel_details"].update(runs=3.0), "results[2].ranks",
     "the copies' runs add up to 33, but app.runs_per_repetition to 60"),
    (lambda r: r.update(precision="other"), "results[2].precision", "but app.name is 'myapp'"),
    (lambda r: r.update(speedup_vs_one_rank_per_gpu=9.0), "results[2].speedup_vs_one_rank_per_gpu",
     "disagrees with the primary median over that of results[0]"),
])
def test_corrupted_legacy_app_records_name_their_own_fields(tmp_path: Path, capsys, mutate, field: str,
                                                            words: str) -> None:
    _, old = _legacy_twin(tmp_path, 2)
    doc = json.loads(old.read_text())
    doc["results"].insert(0, builder.legacy_app_result([1.0, 1.0, 1.0], "mps", 1))
    doc["results"].pop(1)  # mps at 1 copy in place of timeslice at 1: the record mps at 2 is 2 from here
    mutate(doc["results"][2])
    bad = builder.write(tmp_path / "bad.json", doc)
    assert main(["summary", str(bad)]) == 2
    err = capsys.readouterr().err
    assert err.startswith(f"mpsbench-analyze: error: {bad}: field {field}: ") and words in err, err
