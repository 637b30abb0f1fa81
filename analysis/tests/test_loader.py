"""Loading, validation and the schema copy shipped in the package."""

from __future__ import annotations

import copy
import json
import math
from pathlib import Path

import jsonschema
import pytest

import builder
from conftest import ALL_DATA_FILES, DATA_FILES, read_doc, sweep_results
from mpsbench_analysis import AnalysisError, load_results
from mpsbench_analysis.loader import schema

REPO_SCHEMA = Path(__file__).resolve().parents[2] / "schema" / "mpsbench-results.schema.json"
PACKAGE_SCHEMA = (Path(__file__).resolve().parents[1] / "src" / "mpsbench_analysis" / "schema"
                  / "mpsbench-results.schema.json")


def test_package_schema_is_the_repo_schema() -> None:
    # One source: the package's schema is a symbolic link to schema/ (pip copies what it points to).
    assert REPO_SCHEMA.is_file(), f"run the tests from a checkout: {REPO_SCHEMA} missing"
    assert PACKAGE_SCHEMA.is_symlink() and PACKAGE_SCHEMA.resolve() == REPO_SCHEMA.resolve(), \
        "analysis/src/mpsbench_analysis/schema/mpsbench-results.schema.json must link to schema/"


def test_version_2_schema_is_kept_as_it_was() -> None:
    """Files of versions 1 and 2 are validated against the version-2 schema, frozen in the package: a
    kernel-app record there, and no kind (validate.py)."""
    old = schema(2)
    assert old["properties"]["schema_version"]["const"] == 2
    assert "app" in old["definitions"]["result"]["properties"] and "app_result" not in old["definitions"]
    assert schema()["properties"]["schema_version"]["const"] == 3


def test_installed_package_carries_the_schema() -> None:
    assert schema() == json.loads(REPO_SCHEMA.read_text())


def test_builder_documents_are_schema_valid() -> None:
    doc = builder.document(sweep_results())
    jsonschema.Draft7Validator(schema()).validate(doc)
    failed = builder.document([builder.result([1.0, 2.0], status="failed", verified=False)], device="cpu")
    jsonschema.Draft7Validator(schema()).validate(failed)


@pytest.mark.parametrize("path", ALL_DATA_FILES, ids=[p.name for p in ALL_DATA_FILES])
def test_real_files_load(path: Path) -> None:
    rs = load_results([path])
    doc = read_doc(path)
    assert len(rs.results) == len(doc["results"])
    assert len(rs.ranks) == sum(len(r.get("ranks", r.get("copies", []))) for r in doc["results"])
    first = doc["results"][0]
    assert rs.results.loc[0, "throughput"] == first["aggregate"][first["primary_metric"]]["median"]


def test_one_row_per_result_and_per_rank(sweep_file: Path) -> None:
    rs = load_results([sweep_file])
    # matmul: 3 sizes x 2 modes x 3 rank counts; nbody: 2 x 2 x 2; mps-qos: 2
    assert len(rs.results) == 18 + 8 + 2
    # ranks: matmul 3 x 2 x (1+2+4) = 42, nbody 2 x 2 x (1+4) = 20, mps-qos 2 x 2 = 4
    assert len(rs.ranks) == 66
    row = rs.results[(rs.results["size"] == 256) & (rs.results["ranks_per_gpu"] == 4)
                     & (rs.results["mode"] == "mps")].iloc[0]
    assert row["throughput"] == 4.8e12
    assert row["throughput_samples"][2] == 4.8e12
    ranks = rs.ranks[rs.ranks["result_id"] == row["result_id"]]
    assert list(ranks["rank"]) == [0, 1, 2, 3]
    # window = 10 iterations x 4 ranks x 2e9 FLOP / 4.8e12 FLOP/s; per iteration / 10
    assert ranks.iloc[0]["iteration_time_s"] == pytest.approx(4 * 2e9 / 4.8e12)


def test_extra_fields_and_qos_percentages_are_kept(sweep_file: Path) -> None:
    r = load_results([sweep_file]).results
    labels = set(r["mode_label"])
    assert {"timeslice", "mps", "mps-qos:50%", "mps-qos:25%"} <= labels
    qos = r[r["mode_label"] == "mps-qos:50%"].iloc[0]
    assert qos["mps_active_thread_percentage"] == 50
    assert qos["future_field"] == "ignored"
    assert math.isnan(r[r["mode"] == "mps"].iloc[0]["mps_active_thread_percentage"])


def test_unknown_fields_anywhere_are_tolerated(tmp_path: Path) -> None:
    # the schema closes some objects (additionalProperties: false); a newer writer may add
    # optional fields there without a version bump, and this reader must still load the file
    doc = builder.document([builder.result([1e12, 1.2e12])])
    doc["sweep"] = {"modes": ["timeslice", "mps"]}
    doc["results"][0]["aggregate"]["flop_per_s"]["p90"] = 1.1e12
    doc["results"][0]["ranks"][0]["verification"]["method"] = "sampled"
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.Draft7Validator(schema()).validate(doc)  # the strict schema refuses it ...
    row = load_results([builder.write(tmp_path / "new.json", doc)]).results.iloc[0]  # ... we do not
    assert row["throughput"] == 1.1e12


def test_several_files_merge(tmp_path: Path) -> None:
    ts = builder.write(tmp_path / "ts.json", builder.document([builder.result([1e12], mode="timeslice")]))
    mps = builder.write(tmp_path / "mps.json", builder.document([builder.result([2e12], mode="mps")]))
    rs = load_results([ts, mps])
    assert sorted(rs.results["mode"]) == ["mps", "timeslice"]
    assert rs.files == [str(ts), str(mps)]


def test_duplicate_configuration_names_both_files(tmp_path: Path) -> None:
    a = builder.write(tmp_path / "a.json", builder.document([builder.result([1e12])]))
    b = builder.write(tmp_path / "b.json", builder.document([builder.result([2e12])]))
    with pytest.raises(AnalysisError) as err:
        load_results([a, b])
    assert str(err.value).startswith(f"{b}: field results[0]: duplicate result")
    assert str(a) in str(err.value)


def test_a_duplicate_of_two_rounds_names_the_second_file_not_the_next_round(tmp_path: Path) -> None:
    # two runs of a sweep, each with rounds 0 and 1 of one configuration: round 0 of b repeats round 0 of a
    # (the error once named a's own round 1, results[1], as the duplicate)
    run = builder.document([builder.result([1e12], round=0), builder.result([1e12], round=1)])
    a = builder.write(tmp_path / "a.json", run)
    b = builder.write(tmp_path / "b.json", run)
    with pytest.raises(AnalysisError) as err:
        load_results([a, b])
    assert str(err.value).startswith(f"{b}: field results[0]: duplicate result")
    assert str(err.value).endswith(f"already in {a} results[0]; several runs of one suite are compared with "
                                   "mpsbench-analyze agree")


def test_failed_result_has_no_throughput(tmp_path: Path) -> None:
    path = builder.write(tmp_path / "f.json", builder.document(
        [builder.result([1e12, 1e12], status="failed", verified=True)]))
    row = load_results([path]).results.iloc[0]
    assert math.isnan(row["throughput"]) and not row["verified"]


def measured_nothing(r: dict) -> dict:
    """A failed result as mpsbench writes it: every measured field null or empty."""
    r = dict(r, status="failed", error="rank 1 on host h: cudaMalloc failed: out of memory", verified=False)
    r.update(iterations_per_repetition=None, work_per_iteration=None, primary_unit=None, window_s=[],
             aggregate=None, aggregate_cv=None, speedup_vs_one_rank_per_gpu=None, jain_fairness=None,
             max_rel_error=None, ranks=[])
    return r


def test_failed_result_written_by_mpsbench_loads(tmp_path: Path) -> None:
    doc = builder.document([builder.result([1e12]), measured_nothing(builder.result([1e12], size=2048))])
    jsonschema.Draft7Validator(schema()).validate(doc)
    rs = load_results([builder.write(tmp_path / "f.json", doc)])
    row = rs.results.set_index("size").loc[2048]
    assert row["status"] == "failed" and "out of memory" in row["error"]
    assert math.isnan(row["throughput"]) and math.isnan(row["jain_fairness"]) and not row["verified"]
    assert len(rs.ranks) == 1  # only the measured configuration has rank rows
    broken = copy.deepcopy(doc)
    broken["results"][1]["error"] = None  # a failure must say why
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.Draft7Validator(schema()).validate(broken)


def test_incomplete_run_warns_but_loads(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = builder.write(tmp_path / "p.json", builder.document([builder.result([1e12])], complete=False))
    assert len(load_results([path]).results) == 1
    assert "incomplete" in capsys.readouterr().err


def _broken(tmp_path: Path, name: str, mutate) -> Path:
    doc = builder.document([builder.result([1e12, 1.1e12])])
    mutate(doc)
    return builder.write(tmp_path / name, doc)


@pytest.mark.parametrize("mutate, field, words", [
    (lambda d: d["results"][0].pop("kernel"), "results[0].kernel", "required field is missing"),
    (lambda d: d.update(schema_version=4), "schema_version", "version 4 is not supported"),
    (lambda d: d.update(schema_version=0), "schema_version", "version 0 is not supported (this tool reads "
                                                             "versions 1, 2 and 3)"),
    (lambda d: d.update(schema="other"), "schema", "expected 'mpsbench-results'"),
    (lambda d: d["results"][0].update(size="big"), "results[0].size", "expected integer"),
    (lambda d: d["results"][0]["aggregate"]["flop_per_s"].update(median=-1),
     "results[0].aggregate.flop_per_s.median", "minimum"),
    (lambda d: d["context"].pop("hosts"), "context.hosts", "required field is missing"),
    (lambda d: d["results"][0].update(mode="shared"), "results[0].mode", "'shared' is not one of"),
])
def test_schema_errors_name_file_and_field(tmp_path: Path, mutate, field: str, words: str) -> None:
    path = _broken(tmp_path, "bad.json", mutate)
    with pytest.raises(AnalysisError) as err:
        load_results([path])
    message = str(err.value)
    assert message.startswith(f"{path}: field {field}: "), message
    assert words in message
    assert "\n" not in message


@pytest.mark.parametrize("text, words", [
    ("", "file is empty"),
    ("   \n", "file is empty"),
    ('{"schema": "mpsbench-results", "results": [', "truncated JSON"),
    ("not json at all", "not valid JSON"),
    ("[1, 2]", "expected a JSON object"),
    ('{"results": []}', "field schema: required field is missing"),
])
def test_unreadable_files(tmp_path: Path, text: str, words: str) -> None:
    path = builder.write(tmp_path / "x.json", text)
    with pytest.raises(AnalysisError) as err:
        load_results([path])
    assert str(err.value).startswith(f"{path}: ")
    assert words in str(err.value)


def test_empty_results_and_missing_file(tmp_path: Path) -> None:
    empty = builder.write(tmp_path / "e.json", builder.document([]))
    with pytest.raises(AnalysisError, match="field results: no results"):
        load_results([empty])
    with pytest.raises(AnalysisError, match="cannot read file"):
        load_results([tmp_path / "missing.json"])


def test_gzip_compressed_file_reads_like_the_plain_one(tmp_path: Path) -> None:
    import gzip
    plain = builder.write(tmp_path / "r.json", builder.document(sweep_results()))
    packed = tmp_path / "r.json.gz"
    packed.write_bytes(gzip.compress(Path(plain).read_bytes()))
    a, b = load_results([plain]), load_results([packed])
    assert a.results.drop(columns=["file"]).equals(b.results.drop(columns=["file"]))
    damaged = tmp_path / "d.json.gz"
    damaged.write_bytes(gzip.compress(b"{}")[:-6])
    with pytest.raises(AnalysisError, match="not a readable gzip file"):
        load_results([damaged])
