"""Schema version 2: params, request latency, byte/s primaries, --allreduce and mixes, through every
command, and version-1 files next to them."""

from __future__ import annotations

import copy
import csv
import io
import json
import math
from pathlib import Path

import jsonschema
import pytest

import builder
from conftest import DATA_FILES, read_doc
from mpsbench_analysis import AnalysisError, load_results
from mpsbench_analysis.cli import main
from mpsbench_analysis.compare import compare
from mpsbench_analysis.compare_text import render_comparison
from mpsbench_analysis.crossover import all_crossovers
from mpsbench_analysis.export import to_gbench
from mpsbench_analysis.loader import schema
from mpsbench_analysis.summary import render_summary, summarize
from mpsbench_analysis.regression_rule import Rule

T = 1e12


def _write(tmp_path: Path, name: str, records: list[dict], **kwargs) -> Path:
    return builder.write(tmp_path / name, builder.document(records, **kwargs))


def _validate(doc: dict) -> None:
    jsonschema.Draft7Validator(schema()).validate(doc)


# ---- the builder's version-2 records are what the schema describes ------------------------------

def test_version_2_records_are_schema_valid() -> None:
    records = [builder.latency_result(builder.flat(2000.0), 1e-3, ranks_per_gpu=2),
               builder.stream_result(builder.flat(3e12)),
               builder.with_collective(builder.result(builder.flat(T), ranks_per_gpu=2)),
               *builder.mix_sweep(("mps",))]
    _validate(builder.document(records))
    doc = builder.document([builder.result([T])])
    doc["context"]["plan"] = [{"kernel": "matmul", "precision": "fp32", "size": 1024, "ranks_per_gpu": 1,
                               "params": {}},
                              {"kernel": "mix", "precision": "matmul/fp32/2048:2,inference/fp16/64:2", "size": 0,
                               "ranks_per_gpu": 4, "params": {}}]
    doc["context"]["settings"]["allreduce_bytes"] = 1 << 20
    doc["context"]["mix"] = "matmul/fp32/2048:2,inference/fp16/64:2"
    _validate(doc)


@pytest.mark.parametrize("mutate", [
    lambda d: d["results"][0].pop("params"),
    lambda d: d["results"][0].pop("latency"),
    lambda d: d["results"][0]["ranks"][0].pop("tenant"),
    lambda d: d["results"][0].update(primary_metric="request_per_s"),
    lambda d: d["results"][0]["latency"]["overall"].pop("p99"),
    lambda d: d["results"][0]["params"].update(hidden=2048.5),
    lambda d: d["results"][0].update(size=0),  # only a mix has size 0
    lambda d: d["results"][0].update(tenants=[]),  # only a mix has tenants
])
def test_schema_requires_the_version_2_fields(mutate) -> None:
    doc = builder.document([builder.latency_result(builder.flat(2000.0), 1e-3)])
    mutate(doc)
    with pytest.raises(jsonschema.ValidationError):
        _validate(doc)


def test_schema_mix_records() -> None:
    doc = builder.document(builder.mix_sweep(("mps",)))
    broken = copy.deepcopy(doc)
    broken["results"][-1]["size"] = 2048  # a mix's size is 0
    with pytest.raises(jsonschema.ValidationError):
        _validate(broken)
    broken = copy.deepcopy(doc)
    broken["results"][-1]["tenants"] = broken["results"][-1]["tenants"][:1]  # an ok mix has two or more
    with pytest.raises(jsonschema.ValidationError):
        _validate(broken)


# ---- loading: version 1 and 2 --------------------------------------------------------------------

def test_version_1_files_still_load(tmp_path: Path) -> None:
    v1 = _write(tmp_path, "v1.json", [builder.result(builder.flat(T))], version=1)
    doc = json.loads(v1.read_text())
    assert doc["schema_version"] == 1 and "params" not in doc["results"][0]
    row = load_results([v1]).results.iloc[0]
    assert row["params"] == "" and math.isnan(row["latency_p99_s"]) and row["tenants"] is None
    assert math.isnan(row["collective_time_per_iteration_s"]) and row["collective_bytes"] is None
    # the real kernel files of this repository are version 1
    for path in DATA_FILES:
        assert read_doc(path)["schema_version"] == 1
        assert (load_results([path]).results["params"] == "").all()


def test_version_2_files_must_have_the_new_fields(tmp_path: Path) -> None:
    doc = builder.document([builder.result(builder.flat(T))])
    del doc["results"][0]["ranks"][0]["latency_s"]
    with pytest.raises(AnalysisError, match=r"field results\[0\]\.ranks\[0\]\.latency_s: required field is missing"):
        load_results([builder.write(tmp_path / "x.json", doc)])
    # the same record in a version-1 file is fine
    doc["schema_version"] = 1
    assert len(load_results([builder.write(tmp_path / "y.json", doc)]).results) == 1


def test_latency_collective_and_params_columns(tmp_path: Path) -> None:
    record = builder.with_collective(builder.latency_result(builder.flat(2000.0), 1e-3, ranks_per_gpu=2),
                                     nbytes=1 << 20, fraction=0.25)
    rs = load_results([_write(tmp_path, "l.json", [record])])
    row = rs.results.iloc[0]
    overall = record["latency"]["overall"]
    assert row["params"] == "hidden=2048,layers=4" and row["param_values"] == {"hidden": 2048, "layers": 4}
    assert (row["latency_p50_s"], row["latency_p95_s"], row["latency_p99_s"]) == (
        overall["p50"], overall["p95"], overall["p99"])
    assert row["latency_count"] == 400 and row["primary_unit"] == "request/s"
    assert len(row["latency_rank_p99_s"]) == 2
    # the ranks' iteration medians are t and 1.01 t (builder), the collective a quarter of each rank's
    iteration = row["iteration_time_s"]
    assert row["collective_bytes"] == 1 << 20 and row["collective_ok"] is True
    assert row["collective_fraction"] == pytest.approx(0.25)
    assert row["kernel_time_per_iteration_s"] == pytest.approx(iteration - row["collective_time_per_iteration_s"])
    assert row["kernel_time_per_iteration_s"] == pytest.approx(0.75 * iteration)
    ranks = rs.ranks
    assert list(ranks["latency_count"]) == [200, 200] and ranks["latency_p99_s"].notna().all()
    assert ranks.iloc[1]["collective_time_s"] == pytest.approx(0.25 * ranks.iloc[1]["iteration_time_s"])
    assert (ranks["params"] == "hidden=2048,layers=4").all() and ranks["tenant"].isna().all()


def test_stream_bytes_per_second(tmp_path: Path) -> None:
    rs = load_results([_write(tmp_path, "s.json", [builder.stream_result(builder.flat(3.0e12)),
                                                   builder.stream_result(builder.flat(2.8e12), precision="copy")])])
    assert list(rs.results["primary_metric"]) == ["byte_per_s"] * 2
    assert list(rs.results["throughput"]) == [3.0e12, 2.8e12]
    assert "3.00 TB/s" in render_summary(summarize(rs), "table")


def test_params_make_configurations_distinct(tmp_path: Path) -> None:
    a = builder.latency_result(builder.flat(2000.0), 1e-3)
    b = builder.latency_result(builder.flat(1500.0), 2e-3, params={"hidden": 4096, "layers": 4})
    rs = load_results([_write(tmp_path, "p.json", [a, b])])
    assert sorted(rs.results["params"]) == ["hidden=2048,layers=4", "hidden=4096,layers=4"]
    with pytest.raises(AnalysisError, match="duplicate result .*params=hidden=2048,layers=4"):
        load_results([_write(tmp_path, "d.json", [a, copy.deepcopy(a)])])


# ---- the checks between fields of version-2 records --------------------------------------------

def _refused(tmp_path: Path, records: list[dict]) -> str:
    with pytest.raises(AnalysisError) as err:
        load_results([_write(tmp_path, "bad.json", records)])
    return str(err.value).split(": ", 1)[1]


def test_consistency_of_latency(tmp_path: Path) -> None:
    r = builder.latency_result(builder.flat(2000.0), 1e-3, ranks_per_gpu=2)
    bad = copy.deepcopy(r)
    bad["latency"]["overall"]["p50"] = bad["latency"]["overall"]["p99"] * 2
    assert _refused(tmp_path, [bad]).startswith("field results[0].latency.overall.p50: ")
    bad = copy.deepcopy(r)
    bad["latency"]["overall"]["count"] = 401
    assert _refused(tmp_path, [bad]) == ("field results[0].latency.overall.count: 401, but the ranks' "
                                         "latency_s.count add up to 400")
    bad = copy.deepcopy(r)
    bad["ranks"][1]["latency_s"]["mean"] = 1.0
    assert _refused(tmp_path, [bad]).startswith("field results[0].ranks[1].latency_s.mean: ")


def test_consistency_of_the_collective(tmp_path: Path) -> None:
    r = builder.with_collective(builder.result(builder.flat(T), ranks_per_gpu=2))
    bad = copy.deepcopy(r)
    bad["collective"]["fraction_of_iteration"] = 0.5
    assert _refused(tmp_path, [bad]).startswith("field results[0].collective.fraction_of_iteration: 0.5 disagrees")
    bad = builder.with_collective(builder.result(builder.flat(T), ranks_per_gpu=2), ok=False)
    bad["verified"] = True
    assert _refused(tmp_path, [bad]) == "field results[0].verified: true, but collective.ok is false"
    bad = copy.deepcopy(r)
    bad["ranks"][0]["collective_time_s"]["samples"].pop()
    assert "collective_time_s.samples: 4 samples, but repetitions is 5" in _refused(tmp_path, [bad])


def test_consistency_of_mixes(tmp_path: Path) -> None:
    records = builder.mix_sweep(("mps",))
    bad = copy.deepcopy(records)
    bad[-1]["ranks"][3]["tenant"] = 2
    assert _refused(tmp_path, bad).startswith("field results[4].ranks[3].tenant: 2, but a rank of a mix names one")
    bad = copy.deepcopy(records)
    bad[-1]["tenants"][0]["slowdown"] = 2.0
    assert _refused(tmp_path, bad).startswith("field results[4].tenants[0].slowdown: 2.0 disagrees")
    bad = copy.deepcopy(records)
    bad[-1]["tenants"][1]["latency_p99_ratio"] = 9.0
    assert _refused(tmp_path, bad).startswith("field results[4].tenants[1].latency_p99_ratio: 9.0 disagrees")
    bad = copy.deepcopy(records)
    bad[-1]["tenants"][0]["ranks_per_gpu"] = 3  # the tenants no longer the mix the record names
    assert _refused(tmp_path, bad) == ("field results[4].precision: 'matmul/fp32/2048:2,inference/fp16/64:2' names "
                                       "the mix, but its tenants are 'matmul/fp32/2048:3,inference/fp16/64:2'")
    bad[-1]["precision"] = "matmul/fp32/2048:3,inference/fp16/64:2"
    assert _refused(tmp_path, bad) == "field results[4].ranks_per_gpu: 4, but its tenants' ranks_per_gpu add up to 5"
    bad = copy.deepcopy(records)
    bad[0]["ranks"][0]["tenant"] = 0
    assert _refused(tmp_path, bad) == "field results[0].ranks[0].tenant: 0, but the record has no tenants"


# ---- summary ---------------------------------------------------------------------------------------

def test_summary_shows_latency_per_mode_and_ranks(tmp_path: Path) -> None:
    records = [builder.latency_result(builder.flat(2000.0), 1e-3, ranks_per_gpu=k, mode=mode)
               for mode in ("timeslice", "mps") for k in (1, 2)]
    rs = load_results([_write(tmp_path, "l.json", records)])
    df = summarize(rs)
    text = render_summary(df, "table")
    header = text.splitlines()[0].split()
    assert {"p50", "p95", "p99", "params"} <= set(header) and "allreduce" not in header
    # p50 of the builder's latencies around 1 ms: the 100th of 200 values 0.8..1.2 ms
    assert df["latency_p50_s"].between(0.8e-3, 1.2e-3).all()
    assert "hidden=2048,layers=4" in text and " ms " in text
    rows = list(csv.DictReader(io.StringIO(render_summary(df, "csv"))))
    assert float(rows[0]["latency_p99_s"]) == pytest.approx(records[0]["latency"]["overall"]["p99"])
    assert rows[0]["params"] == "hidden=2048,layers=4"
    # a kernel without latency, params or collective: no such columns in the table
    plain = render_summary(summarize(load_results([_write(tmp_path, "m.json", [builder.result([T])])])), "table")
    assert "latency" not in plain.splitlines()[0] and "params" not in plain.splitlines()[0]


def test_summary_shows_collective_next_to_kernel_time(tmp_path: Path) -> None:
    record = builder.with_collective(builder.result(builder.flat(T), ranks_per_gpu=2), fraction=0.2)
    df = summarize(load_results([_write(tmp_path, "c.json", [record])]))
    text = render_summary(df, "table")
    header = text.splitlines()[0]
    assert header.index("kernel time") < header.index("allreduce") < header.index("allreduce share")
    assert "20.0%" in text.splitlines()[2]


# ---- compare -------------------------------------------------------------------------------------

def _latency_run(tmp_path: Path, name: str, p50: float, ranks: int = 4, rate: float = 2000.0, **kwargs) -> Path:
    return _write(tmp_path, name, [builder.latency_result(builder.flat(rate), p50, ranks_per_gpu=ranks, **kwargs)])


def test_compare_judges_p99_latency_higher_is_worse(tmp_path: Path) -> None:
    base = load_results([_latency_run(tmp_path, "b.json", 1e-3)])
    worse = load_results([_latency_run(tmp_path, "w.json", 2e-3)])
    c = compare(base, worse)
    assert list(c.results["verdict"]) == ["SAME"]  # the throughput did not move
    row = c.latency.iloc[0]
    assert row["verdict"] == "SLOWER" and row["regression"] and row["change"] == pytest.approx(1.0)
    assert row["reason"] == "ranges do not overlap" and row["base_ranks"] == row["new_ranks"] == 4
    assert c.regressions == 1 and c.gate_failures() == ["1 regression"]
    text = render_comparison(c, "table", "b.json", "w.json")
    assert "1 higher p99 latency" in text.splitlines()[2]
    assert "request latency p99 (higher is worse" in text and "+100.0%" in text
    better = compare(worse, base)
    assert better.latency.iloc[0]["verdict"] == "FASTER" and better.regressions == 0
    assert compare(base, base).latency.iloc[0]["verdict"] == "SAME"


def test_compare_p99_of_one_rank_has_no_evidence(tmp_path: Path) -> None:
    c = compare(load_results([_latency_run(tmp_path, "b.json", 1e-3, ranks=1)]),
                load_results([_latency_run(tmp_path, "n.json", 2e-3, ranks=1)]))
    row = c.latency.iloc[0]
    assert row["verdict"] == "NOISY" and row["reason"].startswith("fewer than 3 ranks")
    assert c.gate_failures() == [] and c.gate_failures(fail_on_noisy=True) == ["1 NOISY verdict (--fail-on-noisy)"]


def test_compare_judges_stream_bytes_per_second(tmp_path: Path) -> None:
    base = load_results([_write(tmp_path, "b.json", [builder.stream_result(builder.flat(3.0e12))])])
    new = load_results([_write(tmp_path, "n.json", [builder.stream_result(builder.flat(2.4e12))])])
    c = compare(base, new, Rule())
    row = c.results.iloc[0]
    assert row["verdict"] == "SLOWER" and row["regression"] and row["unit"] == "B/s"
    assert "3.00 TB/s" in render_comparison(c, "table", "b", "n")


def test_compare_notes_allreduce_mix_and_params(tmp_path: Path) -> None:
    base_doc = builder.document([builder.latency_result(builder.flat(2000.0), 1e-3), builder.result([T])])
    new_doc = builder.document([builder.latency_result(builder.flat(2000.0), 1e-3, params={"hidden": 1024,
                                                                                           "layers": 4}),
                                builder.result([T])])
    new_doc["context"]["settings"]["allreduce_bytes"] = 1 << 20
    new_doc["context"]["mix"] = "matmul:2,inference:2"
    c = compare(load_results([builder.write(tmp_path / "b.json", base_doc)]),
                load_results([builder.write(tmp_path / "n.json", new_doc)]), allow_context_mismatch=False)
    notes = {d.field: d for d in c.context}
    assert notes["settings.allreduce_bytes"].describe() == "settings.allreduce_bytes: BASE (absent), NEW 1048576"
    assert notes["mix"].new == '"matmul:2,inference:2"'
    assert notes["params of inference fp16"].describe() == (
        "params of inference fp16: BASE hidden=2048,layers=4, NEW hidden=1024,layers=4")
    assert not any(d.mismatch for d in c.context)
    # other params are another configuration: removed and added, not compared
    assert len(c.results) == 1 and len(c.added) == len(c.removed) == 1
    text = render_comparison(c, "table", "b", "n")
    assert "inference/fp16/64/ranks:1/mode:timeslice/params:hidden=1024,layers=4" in text


def test_compare_version_1_base_with_version_2_new(tmp_path: Path) -> None:
    records = [builder.result(builder.flat(T), size=s) for s in (256, 1024)]
    base = load_results([_write(tmp_path, "v1.json", records, version=1)])
    new = load_results([_write(tmp_path, "v2.json", records)])
    c = compare(base, new)
    assert list(c.results["verdict"]) == ["SAME", "SAME"] and c.added.empty and c.removed.empty
    assert c.context == [] and c.latency.empty


# ---- other commands ----------------------------------------------------------------------------------

def test_export_names_carry_params(tmp_path: Path) -> None:
    rs = load_results([_write(tmp_path, "l.json", [builder.latency_result(builder.flat(2000.0), 1e-3),
                                                   builder.result([T])])])
    names = {b["name"] for b in to_gbench(rs)["benchmarks"] if b["run_type"] == "iteration"}
    assert "inference/fp16/64/hidden=2048,layers=4/ranks:1/mode:timeslice" in names
    assert "matmul/fp32/1024/ranks:1/mode:timeslice" in names


def test_crossover_leaves_mixes_out(tmp_path: Path) -> None:
    rs = load_results([_write(tmp_path, "m.json", builder.mix_sweep())])
    found = all_crossovers(rs)
    assert {c.kernel for c in found} == {"matmul", "inference"}
    inference = next(c for c in found if c.kernel == "inference")
    assert inference.params == "hidden=2048,layers=4" and "(hidden=2048,layers=4)" in inference.title


@pytest.mark.parametrize("argv", [["summary"], ["summary", "--format", "json"], ["summary", "--format", "markdown"],
                                  ["crossover"], ["export"], ["compare-self"], ["plot"], ["report"]])
def test_every_command_reads_version_2_files(tmp_path: Path, capsys, argv: list[str]) -> None:
    records = builder.mix_sweep() + [builder.stream_result(builder.flat(3e12)),
                                     builder.with_collective(builder.result(builder.flat(T), size=512,
                                                                            ranks_per_gpu=2))]
    path = _write(tmp_path, "all.json", records)
    if argv == ["compare-self"]:
        argv = ["compare", str(path), str(path)]
    elif argv == ["plot"]:
        argv = ["plot", str(path), "--outdir", str(tmp_path / "plots"), "--formats", "png"]
    elif argv == ["report"]:
        argv = ["report", str(path), "-o", str(tmp_path / "r.html")]
    else:
        argv = [*argv, str(path)]
    assert main(argv) == 0, capsys.readouterr().err
    out = capsys.readouterr().out
    if argv[0] == "plot":
        stems = {Path(line).stem for line in out.splitlines()}
        assert {"latency_inference_fp16_size-64", "slowdown_mix", "throughput_stream_fp64"} <= stems
        assert not any(stem.startswith(("throughput_mix", "rank-times_mix")) for stem in stems)
