"""Noise figures and throttle marks: loaded from newer files, computed for older ones, shown in every table.

The noise of samples [8, 9, 10, 11, 12] (x 1e12) by hand: median 10, sample
standard deviation sqrt(10 / 4) = 1.5811, so 1.2533 x 1.5811 / (sqrt(5) x 10)
= 0.08862 (8.86 %).  builder.flat(v) (+-0.2 %) gives 0.0886 %, and
builder.flat(v, spread=0.05) ([9.5, 9.75, 10, 10.25, 10.5]) gives
1.2533 x 0.39528 / (sqrt(5) x 10) = 0.02216 (2.22 %).
"""

from __future__ import annotations

import csv
import io
import json
import math
from pathlib import Path

import jsonschema
import pandas as pd
import pytest

import builder
from conftest import DATA_FILES
from mpsbench_analysis import AnalysisError, load_results
from mpsbench_analysis.cli import main
from mpsbench_analysis.compare import compare
from mpsbench_analysis.compare_text import LEGEND as COMPARE_LEGEND, render_comparison
from mpsbench_analysis.quality import CPU_SLOWED_LEGEND, LEGEND, mark_tokens
from mpsbench_core.stats import relative_noise
from mpsbench_analysis.summary import render_summary, summarize

T = 1e12
WIDE = [8 * T, 9 * T, 10 * T, 11 * T, 12 * T]
WIDE_NOISE = 0.088623
REPO_SCHEMA = Path(__file__).resolve().parents[2] / "schema" / "mpsbench-results.schema.json"


def _marked_results() -> list[dict]:
    """One matmul fp32 timeslice result per case, the size says which (marks in the comments)."""
    q = builder.with_quality
    return [
        q(builder.result(builder.flat(10 * T), size=1)),                              # ''
        q(builder.result(WIDE, size=2)),                                               # noise>2%
        q(builder.result(WIDE, size=3), target=0.10),                                  # '' (8.86 % <= 10 %)
        q(builder.result(builder.flat(10 * T), size=4), affected=[1, 0, 0, 1, 0]),     # throttled:2/5
        q(builder.result(WIDE, size=5), affected=[0, 0, 1, 0, 0], discarded=2),       # noise>2% throttled:1/5
        q(builder.result(builder.flat(10 * T, spread=0.05), size=6), target=0.01),     # noise>1%
        q(builder.result(builder.flat(10 * T), size=7, status="failed", verified=False)),  # failed: none
    ]


EXPECTED_MARKS = {1: "", 2: "noise>2%", 3: "", 4: "throttled:2/5", 5: "noise>2% throttled:1/5", 6: "noise>1%", 7: ""}


@pytest.fixture
def marked_file(tmp_path: Path) -> Path:
    doc = builder.quality_settings(builder.document(_marked_results()))
    return builder.write(tmp_path / "marked.json", doc)


def test_noise_estimator_by_hand() -> None:
    assert relative_noise(WIDE) == pytest.approx(WIDE_NOISE, rel=1e-4)
    assert relative_noise(builder.flat(10.0, spread=0.05)) == pytest.approx(0.022155, rel=1e-4)
    assert relative_noise([3.0, 3.0, 3.0]) == 0.0
    assert math.isnan(relative_noise([5.0]))  # no spread to estimate, as the harness writes null
    assert math.isnan(relative_noise([-1.0, 0.0, 1.0]))  # median 0


def test_builder_fixtures_follow_the_repository_schema() -> None:
    doc = builder.quality_settings(builder.document(_marked_results()
                                                    + [builder.with_quality(builder.app_result([1.0, 1.1, 1.2]))]),
                                   max_noise=0.01)
    jsonschema.Draft7Validator(json.loads(REPO_SCHEMA.read_text())).validate(doc)


def test_loaded_columns(marked_file: Path) -> None:
    r = load_results([marked_file]).results.set_index("size")
    assert r.loc[2, "noise"] == pytest.approx(WIDE_NOISE, rel=1e-4) and r.loc[2, "noise_source"] == "file"
    assert r.loc[2, "noise_estimator"] == "median_se_normal"
    assert math.isnan(r.loc[2, "noise_target"]) and r.loc[2, "noise_limit"] == 0.02 and r.loc[2, "noisy"]
    assert r.loc[3, "noise_target"] == 0.10 and not r.loc[3, "noisy"]
    assert r.loc[5, "throttled_repetitions"] == 1 and r.loc[5, "discarded_repetitions"] == 2
    assert r.loc[5, "repetition_throttled"] == (False, False, True, False, False)
    assert r.loc[5, "clock_events"] == "sw_thermal" and r.loc[5, "min_sm_clock_mhz"] == 1410.0
    assert r.loc[4, "warmup_windows"] == 3 and r.loc[4, "warmup_stable"]
    assert math.isnan(r.loc[7, "noise"]) and not r.loc[7, "noisy"] and pd.isna(r.loc[7, "throttled_repetitions"])


def test_summary_table_marks_and_legend(marked_file: Path) -> None:
    text = render_summary(summarize(load_results([marked_file])), "table")
    lines = text.rstrip("\n").splitlines()
    assert lines[-1] == LEGEND and lines[-2] == ""
    assert lines[0].split()[-2:] == ["verified", "marks"] and "noise" in lines[0].split()
    rows = {int(line.split()[2]): line for line in lines[2:-2] if line}
    for size, marks in EXPECTED_MARKS.items():
        verified = "FAILED" if size == 7 else "yes"
        assert rows[size].rstrip().endswith(f"{verified}  {marks}".rstrip()), rows[size]
    # the noise column: 8.86 % at size 2, '-' for the failed result
    assert rows[2].split()[8] == "8.86%" and rows[7].split()[8] == "-"


def test_summary_markdown_marks_and_legend(marked_file: Path) -> None:
    md = render_summary(summarize(load_results([marked_file])), "markdown")
    lines = md.rstrip("\n").splitlines()
    assert lines[0].endswith("| verified | marks |") and lines[-1] == LEGEND and lines[-2] == ""
    row = next(line for line in lines if line.startswith("| matmul | fp32 | 5 |"))
    assert "| 8.86% |" in row and row.endswith("| yes | noise>2% throttled:1/5 |")
    assert next(line for line in lines if line.startswith("| matmul | fp32 | 1 |")).endswith("| yes |  |")


def test_summary_csv_has_the_raw_marks(marked_file: Path) -> None:
    rows = {int(r["size"]): r for r in csv.DictReader(io.StringIO(
        render_summary(summarize(load_results([marked_file])), "csv")))}
    assert len(rows) == 7  # no legend line in a CSV
    r = rows[5]
    assert float(r["noise"]) == pytest.approx(WIDE_NOISE, rel=1e-4) and r["noise_limit"] == "0.02"
    assert r["noisy"] == "True" and r["throttled_repetitions"] == "1" and r["discarded_repetitions"] == "2"
    assert r["marks"] == "noise>2% throttled:1/5" and r["noise_source"] == "file" and r["clock_source"] == "nvml"
    assert rows[3]["noise_target"] == "0.1" and rows[3]["noisy"] == "False" and rows[3]["marks"] == ""
    assert rows[7]["noise"] == "" and rows[7]["throttled_repetitions"] == ""


def test_summary_json_has_marks_and_legend(marked_file: Path, capsys) -> None:
    assert main(["summary", str(marked_file), "--format", "json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert doc["legend"] == LEGEND
    by_size = {r["size"]: r for r in doc["results"]}
    assert {s: " ".join(r["marks"]) for s, r in by_size.items()} == EXPECTED_MARKS
    assert by_size[5]["marks"] == ["noise>2%", "throttled:1/5"] and by_size[5]["throttled_repetitions"] == 1
    assert by_size[6]["noise_target"] == 0.01 and by_size[6]["noise"] == pytest.approx(0.022155, rel=1e-4)
    assert by_size[7]["noise"] is None and by_size[7]["status"] == "failed"


def test_run_target_from_settings_and_noise_from_the_file(tmp_path: Path) -> None:
    # no noise object: computed from the samples; the target then is settings.max_noise (10 %: 8.86 % is within)
    doc = builder.quality_settings(builder.document([builder.result(WIDE, size=1)]), max_noise=0.10)
    r = load_results([builder.write(tmp_path / "a.json", doc)]).results.iloc[0]
    assert r["noise_source"] == "computed" and r["noise"] == pytest.approx(WIDE_NOISE, rel=1e-4)
    assert r["noise_target"] == 0.10 and r["noise_limit"] == 0.10 and not r["noisy"]
    # a noise figure of another estimator in the file wins over the samples (flat samples, but it says 5 %)
    record = builder.with_quality(builder.result(builder.flat(10 * T)), relative=0.05)
    record["noise"]["estimator"] = "bootstrap_median_ci"
    doc = builder.document([record])
    r = load_results([builder.write(tmp_path / "b.json", doc)]).results.iloc[0]
    assert (r["noise_source"], r["noise"], r["noise_limit"], r["noisy"]) == ("file", 0.05, 0.02, True)
    # the harness's own estimator must be the figure of the samples: 5 % of flat samples is refused
    record["noise"]["estimator"] = "median_se_normal"
    path = builder.write(tmp_path / "b2.json", builder.document([record]))
    with pytest.raises(AnalysisError, match=r"field results\[0\]\.noise\.relative: 0.05 disagrees with the relative "
                                            "noise of the primary samples"):
        load_results([path])
    # a null figure in the file (the writer's for fewer than two repetitions) is computed where it can be
    doc = builder.document([builder.with_quality(builder.result(WIDE), relative=None)])
    r = load_results([builder.write(tmp_path / "c.json", doc)]).results.iloc[0]
    assert r["noise_source"] == "computed" and r["noise"] == pytest.approx(WIDE_NOISE, rel=1e-4)


@pytest.mark.parametrize("path", DATA_FILES, ids=[p.name for p in DATA_FILES])
def test_old_files_get_a_computed_noise_and_no_throttle_mark(path: Path) -> None:
    rs = load_results([path])
    ok = rs.results[rs.results["status"] == "ok"]
    assert set(ok["noise_source"]) <= {"computed", ""} and ok["noise"].notna().any()
    expected = [relative_noise(s) for s in ok["throughput_samples"]]
    assert list(ok["noise"]) == pytest.approx(expected, nan_ok=True)
    assert rs.results["throttled_repetitions"].isna().all()
    df = summarize(rs)
    assert not df["marks"].str.contains("throttled").any()
    assert list(df["marks"] == "noise>2%") == list(df["noise"] > 0.02)
    lines = render_summary(df, "table").rstrip("\n").splitlines()
    assert lines[-1] == LEGEND


def test_mark_tokens() -> None:
    assert mark_tokens(False, 0.02, None, 5) == []
    assert mark_tokens(True, 0.0125, pd.NA, 5) == ["noise>1.25%"]
    assert mark_tokens(False, 0.02, 0, 5) == []
    assert mark_tokens(True, 0.02, 3, 7) == ["noise>2%", "throttled:3/7"]
    assert mark_tokens(False, 0.02, 1, 5, cpu_slowed=2) == ["throttled:1/5", "cpu-slowed:2/5"]
    assert mark_tokens(False, 0.02, None, 5, cpu_slowed=pd.NA) == [] and "cpu-slowed:K/N" in CPU_SLOWED_LEGEND


# ---- the host-CPU record ----------------------------------------------------------------------------

def _with_cpu(record: dict, ratios: list[float], threshold: float = 0.3, discarded: int = 0,
              readable: bool = True) -> dict:
    """``record`` with the ``cpu`` object mpsbench writes: a repetition is slowed where its ratio > 1 + threshold."""
    out = json.loads(json.dumps(record))
    flags = [ratio > 1 + threshold for ratio in ratios]
    out["cpu"] = {"probe": "relax_sweep_2048x8", "threshold": threshold, "reference_probe_s": 3.7e-6,
                  "slowed_repetitions": sum(flags), "discarded_repetitions": discarded, "repetition_slowed": flags,
                  "probe_ratio": list(ratios), "steal_s": [0.0] * len(ratios) if readable else None,
                  "run_delay_s": [1e-5] * len(ratios) if readable else None,
                  "note": "" if readable else "cannot read /proc/stat"}
    return out


RATIOS = [1.0, 1.5, 1.02, 1.31, 1.1]  # slowed at 1.5 and 1.31 (threshold 0.3)


def test_cpu_fixtures_follow_the_repository_schema() -> None:
    doc = builder.document([_with_cpu(builder.with_quality(builder.result(WIDE, size=1)), RATIOS, discarded=2),
                            _with_cpu(builder.result(WIDE, size=2), RATIOS, readable=False)])
    jsonschema.Draft7Validator(json.loads(REPO_SCHEMA.read_text())).validate(doc)


def test_cpu_columns(tmp_path: Path) -> None:
    doc = builder.document([_with_cpu(builder.result(WIDE, size=1), RATIOS, discarded=2),
                            _with_cpu(builder.result(WIDE, size=2), [1.0] * 5, readable=False),
                            builder.result(WIDE, size=3)])
    r = load_results([builder.write(tmp_path / "f.json", doc)]).results.set_index("size")
    assert (r.loc[1, "cpu_slowed_repetitions"], r.loc[1, "cpu_discarded_repetitions"]) == (2, 2)
    assert r.loc[1, "repetition_cpu_slowed"] == (False, True, False, True, False)
    assert r.loc[1, "max_probe_ratio"] == 1.5
    assert r.loc[2, "cpu_slowed_repetitions"] == 0  # null steal and run delay with a note load all the same
    assert pd.isna(r.loc[3, "cpu_slowed_repetitions"]) and math.isnan(r.loc[3, "max_probe_ratio"])  # older files
    assert r.loc[3, "repetition_cpu_slowed"] == ()


@pytest.mark.parametrize("mutate, field, words", [
    (lambda c: c["repetition_slowed"].pop(), "repetition_slowed", "4 entries, but repetitions is 5"),
    (lambda c: c["probe_ratio"].append(1.0), "probe_ratio", "6 entries, but repetitions is 5"),
    (lambda c: c["steal_s"].pop(), "steal_s", "4 entries, but repetitions is 5"),
    (lambda c: c.update(run_delay_s=[]), "run_delay_s", "0 entries, but repetitions is 5"),
    (lambda c: c.update(slowed_repetitions=3), "slowed_repetitions", "3, but repetition_slowed holds 2 true"),
    (lambda c: c.update(slowed_repetitions=3) or c["repetition_slowed"].__setitem__(2, True), "repetition_slowed[2]",
     "True, but probe_ratio[2] = 1.02 is not above 1 + threshold (1.3)"),
    (lambda c: c.update(slowed_repetitions=1) or c["repetition_slowed"].__setitem__(3, False),
     "repetition_slowed[3]", "False, but probe_ratio[3] = 1.31 is above 1 + threshold (1.3)"),
    (lambda c: c["probe_ratio"].__setitem__(0, "x"), "probe_ratio[0]", "expected number"),
    (lambda c: c["steal_s"].__setitem__(1, -0.01), "steal_s[1]", "less than the minimum of 0"),
    (lambda c: c["repetition_slowed"].__setitem__(0, 0), "repetition_slowed[0]", "expected boolean"),
    (lambda c: c.update(threshold="30%"), "threshold", "expected number"),
])
def test_inconsistent_cpu_fields_are_refused(tmp_path: Path, capsys, mutate, field: str, words: str) -> None:
    bad = _with_cpu(builder.result(builder.flat(10 * T)), RATIOS)
    mutate(bad["cpu"])
    path = builder.write(tmp_path / "bad.json", builder.document([bad]))
    assert main(["summary", str(path)]) == 2
    out, err = capsys.readouterr()
    assert out == "" and err.startswith(f"mpsbench-analyze: error: {path}: field results[0].cpu.{field}: ")
    assert words in err and len(err.strip().splitlines()) == 1


def test_a_cpu_that_is_not_an_object_is_refused(tmp_path: Path) -> None:
    record = builder.result(WIDE)
    record["cpu"] = []
    with pytest.raises(AnalysisError, match=r"field results\[0\]\.cpu: "):
        load_results([builder.write(tmp_path / "f.json", builder.document([record]))])


# ---- consistency of the new fields --------------------------------------------------------------

@pytest.mark.parametrize("mutate, field, words", [
    (lambda r: r["clocks"]["repetition_affected"].pop(), "results[0].clocks.repetition_affected",
     "4 entries, but repetitions is 5"),
    (lambda r: r["clocks"].update(affected_repetitions=3), "results[0].clocks.affected_repetitions",
     "3, but repetition_affected holds 2 true"),
    (lambda r: r["noise"].update(relative="x"), "results[0].noise.relative", ""),
    (lambda r: r["noise"].update(relative=-0.5), "results[0].noise.relative", ""),
    (lambda r: r.update(clocks=[]), "results[0].clocks", ""),
    (lambda r: r["clocks"]["repetition_affected"].__setitem__(0, 1), "results[0].clocks.repetition_affected[0]", ""),
    (lambda r: r["clocks"].update(affected_repetitions=1.0), "results[0].clocks.affected_repetitions", ""),
])
@pytest.mark.parametrize("command", ["summary", "compare-new"])
def test_inconsistent_quality_fields_are_refused(tmp_path: Path, capsys, mutate, field: str, words: str,
                                                 command: str) -> None:
    good = builder.with_quality(builder.result(builder.flat(10 * T)), affected=[1, 0, 0, 1, 0])
    bad = json.loads(json.dumps(good))
    mutate(bad)
    base = builder.write(tmp_path / "base.json", builder.document([good]))
    path = builder.write(tmp_path / "bad.json", builder.document([bad]))
    argv = ["compare", str(base), str(path)] if command == "compare-new" else ["summary", str(path)]
    assert main(argv) == 2
    out, err = capsys.readouterr()
    assert out == "" and err.startswith(f"mpsbench-analyze: error: {path}: field {field}: ") and words in err
    assert len(err.strip().splitlines()) == 1


def test_bad_max_noise_setting_is_refused(tmp_path: Path) -> None:
    doc = builder.document([builder.result(WIDE)])
    doc["context"]["settings"]["max_noise"] = "1%"
    with pytest.raises(AnalysisError, match=r"field context\.settings\.max_noise: "):
        load_results([builder.write(tmp_path / "f.json", doc)])


def test_clocks_not_monitored_make_no_mark(tmp_path: Path) -> None:
    doc = builder.document([builder.with_quality(builder.result(WIDE), source="none")])
    r = load_results([builder.write(tmp_path / "f.json", doc)]).results.iloc[0]
    assert r["clock_source"] == "none" and pd.isna(r["throttled_repetitions"])


# ---- compare ----------------------------------------------------------------------------------------

# median 9.05, mean 9.41, sd sqrt(10.162 / 4) = 1.5939: noise 1.2533 x 1.5939 / (sqrt(5) x 9.05) = 9.87 %
NEW_WIDE = [7.5 * T, 8.5 * T, 9.05 * T, 10.5 * T, 11.5 * T]


def _compare_pair(tmp_path: Path) -> tuple[Path, Path]:
    """BASE an older file (no noise, no clocks); NEW a newer one with throttled repetitions."""
    base = [builder.result(WIDE, size=1),
            builder.result(builder.flat(10 * T), size=100, ranks_per_gpu=2, mode="timeslice"),
            builder.result(builder.flat(15 * T), size=100, ranks_per_gpu=2, mode="mps")]
    new = [builder.with_quality(builder.result(NEW_WIDE, size=1), affected=[0, 1, 0, 0, 0]),
           builder.with_quality(builder.result(builder.flat(10 * T), size=100, ranks_per_gpu=2, mode="timeslice"),
                                affected=[1, 0, 0, 0, 0]),
           builder.with_quality(builder.result(builder.flat(15 * T), size=100, ranks_per_gpu=2, mode="mps"),
                                affected=[0, 0, 1, 1, 0])]
    return (builder.write(tmp_path / "base.json", builder.document(base)),
            builder.write(tmp_path / "new.json", builder.quality_settings(builder.document(new))))


def test_compare_marks_old_base_against_new_file(tmp_path: Path) -> None:
    b, n = _compare_pair(tmp_path)
    c = compare(load_results([b]), load_results([n]))
    rows = {(r.size, r.mode_label): r for r in c.results.itertuples()}
    noisy = rows[(1, "timeslice")]
    assert noisy.verdict == "NOISY"
    assert noisy.reason == "not significant (p = 0.69 >= 0.05); noise 8.86% -> 9.87%"
    assert (noisy.base_marks, noisy.new_marks) == ("noise>2%", "noise>2% throttled:1/5")
    assert (rows[(100, "mps")].base_marks, rows[(100, "mps")].new_marks) == ("", "throttled:2/5")
    gain = c.gains.iloc[0]
    # the gain divides mps (2 of 5 throttled) by timeslice (1 of 5): counts summed
    assert (gain["verdict"], gain["base_marks"], gain["new_marks"]) == ("SAME", "", "throttled:3/10")
    assert c.regressions == 0 and c.gate_failures() == []  # marks never fail the gate


def test_compare_outputs_show_marks_and_legend(tmp_path: Path, capsys) -> None:
    b, n = _compare_pair(tmp_path)
    md = tmp_path / "c.md"
    assert main(["compare", str(b), str(n), "--markdown", str(md)]) == 0
    out = capsys.readouterr().out
    header = next(line for line in out.splitlines() if line.startswith("kernel"))
    assert "base marks" in header and "new marks" in header
    assert COMPARE_LEGEND in out.splitlines() and out.rstrip().endswith("gate: pass (exit 0)")
    text = md.read_text()
    assert "| NOISY | yes | noise>2% | noise>2% throttled:1/5 | not significant (p = 0.69 >= 0.05); noise 8.86% -> " \
           "9.87% |" in text
    assert "| SAME |  | throttled:3/10 |" in text and COMPARE_LEGEND in text.splitlines()


def test_compare_newer_file_with_itself(marked_file: Path, capsys) -> None:
    assert main(["compare", str(marked_file), str(marked_file)]) == 0
    out = capsys.readouterr().out
    assert "no regression" in out and "throttled:1/5" in out


def test_noisy_gain_reason_gives_the_noise_of_the_gain(tmp_path: Path) -> None:
    ts = builder.result(builder.flat(10 * T), ranks_per_gpu=2, mode="timeslice")
    b = builder.write(tmp_path / "b.json", builder.document([ts, builder.result(WIDE, ranks_per_gpu=2, mode="mps")]))
    n = builder.write(tmp_path / "n.json",
                      builder.document([ts, builder.result(NEW_WIDE, ranks_per_gpu=2, mode="mps")]))
    gain = compare(load_results([b]), load_results([n])).gains.iloc[0]
    assert gain["verdict"] == "NOISY" and "; noise " in gain["reason"]
    assert gain["base_noise"] == pytest.approx(relative_noise([x / y for x, y in zip(WIDE, builder.flat(10 * T))]))
    assert gain["base_marks"] == "noise>2%"  # the mps result it divides is noisy


def test_largest_counts_a_file_may_hold_stay_exact(tmp_path: Path, capsys) -> None:
    # within the 64-bit range the writers use (json_values.py), so the file loads; the counts stay integers
    record = builder.with_quality(builder.result(WIDE, size=1), affected=[1, 0, 0, 0, 0])
    record["warmup"]["windows"] = 2**64 - 1
    record["clocks"]["discarded_repetitions"] = 2**63
    path = builder.write(tmp_path / "f.json", builder.document([record, builder.result(WIDE, size=2)]))
    assert main(["summary", str(path), "--format", "csv"]) == 0
    rows = list(csv.DictReader(io.StringIO(capsys.readouterr().out)))
    assert [r["discarded_repetitions"] for r in rows] == [str(2**63), ""]
    assert [r["throttled_repetitions"] for r in rows] == ["1", ""]
    assert load_results([path]).results["warmup_windows"].tolist() == [2**64 - 1, None]
