"""Validation of values, not only shapes: finite numbers, integers, counts and summaries that agree."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Callable

import pytest

import builder
from conftest import H100_SWEEP, read_doc
from mpsbench_analysis import AnalysisError, load_results
from mpsbench_analysis.json_values import MAX_DEPTH

T = 1e12
SENTINEL = "__replace_me__"


def _doc(**result_args: Any) -> dict[str, Any]:
    return builder.document([builder.result([T, 1.1 * T, 1.2 * T], ranks_per_gpu=2, **result_args)])


def _refused(tmp_path: Path, doc: dict[str, Any] | str, raw: str | None = None) -> str:
    """The message load_results gives for ``doc``; ``raw`` replaces the SENTINEL string in the text."""
    text = doc if isinstance(doc, str) else json.dumps(doc, indent=1)
    if raw is not None:
        text = text.replace(json.dumps(SENTINEL), raw)
    path = builder.write(tmp_path / "bad.json", text)
    with pytest.raises(AnalysisError) as err:
        load_results([path])
    message = str(err.value)
    assert message.startswith(f"{path}: ") and "\n" not in message, message
    return message[len(f"{path}: "):]


# ---- numbers no writer produces -----------------------------------------------------------

@pytest.mark.parametrize("token", ["NaN", "Infinity", "-Infinity", "1e999"])
def test_non_finite_measurement_is_refused(tmp_path: Path, token: str) -> None:
    doc = _doc()
    doc["results"][0]["aggregate"]["flop_per_s"]["median"] = SENTINEL
    assert _refused(tmp_path, doc, token).startswith(
        "field results[0].aggregate.flop_per_s.median: not a finite number")


@pytest.mark.parametrize("where", [
    lambda d: d["context"]["settings"].update(min_time_s=SENTINEL),
    lambda d: d["results"][0]["ranks"][1]["kernel_details"].update(cpu_phase_s=SENTINEL),
    lambda d: d["context"].update(written_by_a_newer_tool=[1, {"x": SENTINEL}]),  # a field we do not read
])
def test_non_finite_number_anywhere_is_refused(tmp_path: Path, where: Callable[[dict], None]) -> None:
    doc = _doc()
    where(doc)
    assert "not a finite number (NaN)" in _refused(tmp_path, doc, "NaN")


def test_real_file_with_a_nan_names_the_field(tmp_path: Path) -> None:
    doc = read_doc(H100_SWEEP)
    doc["results"][3]["aggregate"]["flop_per_s"]["median"] = float("nan")
    assert _refused(tmp_path, doc) == "field results[3].aggregate.flop_per_s.median: not a finite number (NaN)"


@pytest.mark.parametrize("raw, words", [
    ("1e101", "1e+101 is out of range (magnitude above 1e+100)"),
    (str(2**64), "integer out of the 64-bit range"),
])
def test_numbers_out_of_range_are_refused(tmp_path: Path, raw: str, words: str) -> None:
    doc = _doc()
    doc["results"][0]["window_s"][0] = SENTINEL
    assert _refused(tmp_path, doc, raw) == f"field results[0].window_s[0]: {words}"


def test_number_with_too_many_digits_is_refused(tmp_path: Path) -> None:
    doc = _doc()
    doc["results"][0]["size"] = SENTINEL
    assert _refused(tmp_path, doc, "9" * 5000).startswith("not valid JSON: Exceeds the limit")


def test_lone_surrogate_is_refused(tmp_path: Path) -> None:
    doc = _doc(kernel="\udc80")  # json.dumps writes the escape "\udc80", which json.loads accepts
    assert _refused(tmp_path, doc) == "field results[0].kernel: string is not valid Unicode (a lone surrogate escape)"


@pytest.mark.parametrize("field, value, expected", [
    ("size", 32.0, "integer"), ("ranks_per_gpu", 2.0, "integer"), ("repetitions", 3.0, "integer"),
    ("iterations_per_repetition", 10.0, "integer or null"),
])
def test_integer_fields_refuse_floats(tmp_path: Path, field: str, value: float, expected: str) -> None:
    doc = _doc()
    doc["results"][0][field] = value
    assert _refused(tmp_path, doc) == f"field results[0].{field}: expected {expected}, got {value!r}"


def test_schema_version_written_as_a_float_is_refused(tmp_path: Path) -> None:
    assert _refused(tmp_path, dict(_doc(), schema_version=1.0)) == (
        "field schema_version: version 1.0 is not supported (this tool reads versions 1, 2 and 3)")


def test_integer_fields_elsewhere_refuse_floats(tmp_path: Path) -> None:
    doc = _doc()
    doc["results"][0]["ranks"][1]["verification"]["checked_values"] = 1024.0
    assert _refused(tmp_path, doc) == ("field results[0].ranks[1].verification.checked_values: "
                                       "expected integer, got 1024.0")


# ---- nesting ------------------------------------------------------------------------------

def test_nesting_beyond_the_limit_is_refused(tmp_path: Path) -> None:
    doc = _doc()
    doc["context"]["note"] = SENTINEL
    message = _refused(tmp_path, doc, "[" * (MAX_DEPTH + 5) + "]" * (MAX_DEPTH + 5))
    assert message.startswith("field context.note[0][0][0][0][0][0]...: nested too deeply (more than 64 levels)")


@pytest.mark.parametrize("opener, closer", [("[", "]"), ('{"a":', "}")])
def test_nesting_that_breaks_the_json_decoder_is_refused(tmp_path: Path, opener: str, closer: str) -> None:
    doc = _doc()
    doc["results"][0]["size"] = SENTINEL
    assert _refused(tmp_path, doc, opener * 100000 + closer * 100000) == "not valid JSON: nested too deeply"


def test_nesting_within_the_limit_is_accepted(tmp_path: Path) -> None:
    doc = _doc()
    doc["context"]["note"] = SENTINEL  # an unknown field; the format itself nests about 7 levels
    text = json.dumps(doc).replace(json.dumps(SENTINEL), "[" * 50 + "]" * 50)
    assert len(load_results([builder.write(tmp_path / "ok.json", text)]).results) == 1


# ---- counts and summaries that agree ------------------------------------------------------

def _result_of(doc: dict[str, Any]) -> dict[str, Any]:
    return doc["results"][0]


CONSISTENCY = [
    (lambda r: r["ranks"].pop(), "results[0].ranks", "1 entry, but active_ranks is 2"),
    (lambda r: r["ranks"].append(dict(r["ranks"][0])), "results[0].ranks", "3 entries, but active_ranks is 2"),
    (lambda r: r["window_s"].pop(), "results[0].window_s", "2 entries, but repetitions is 3"),
    (lambda r: r.update(repetitions=4), "results[0].window_s", "3 entries, but repetitions is 4"),
    (lambda r: r["aggregate"]["byte_per_s"]["samples"].pop(), "results[0].aggregate.byte_per_s.samples",
     "2 samples, but repetitions is 3"),
    (lambda r: r["ranks"][1]["iteration_time_s"]["samples"].pop(), "results[0].ranks[1].iteration_time_s.samples",
     "2 samples, but repetitions is 3"),
    (lambda r: r["ranks"][0]["gpu_iteration_time_s"]["samples"].append(1.0),
     "results[0].ranks[0].gpu_iteration_time_s.samples", "4 samples, but repetitions is 3"),
    (lambda r: r["aggregate"]["flop_per_s"].update(median=2 * T), "results[0].aggregate.flop_per_s.median",
     "2000000000000.0 disagrees with its samples, whose median is 1100000000000.0"),
    (lambda r: r["aggregate"]["flop_per_s"].update(min=0.0), "results[0].aggregate.flop_per_s.min",
     "disagrees with its samples, whose min is 1000000000000.0"),
    (lambda r: r["ranks"][0]["iteration_time_s"].update(max=1.0), "results[0].ranks[0].iteration_time_s.max",
     "disagrees with its samples, whose max is"),
    (lambda r: r["window_s"].__setitem__(1, 2 * r["window_s"][1]), "results[0].aggregate.flop_per_s.samples[1]",
     "disagrees with active_ranks x iterations_per_repetition x work_per_iteration.flop / window_s[1]"),
    (lambda r: r.update(iterations_per_repetition=11), "results[0].aggregate.flop_per_s.samples[0]",
     "disagrees with active_ranks x iterations_per_repetition"),
    (lambda r: r["work_per_iteration"].update(byte=2e7), "results[0].aggregate.byte_per_s.samples[0]",
     "work_per_iteration.byte / window_s[0]"),
    (lambda r: r.update(aggregate_cv=0.5), "results[0].aggregate_cv",
     "0.5 disagrees with the CV of aggregate.flop_per_s.samples"),
    (lambda r: r.update(jain_fairness=0.75), "results[0].jain_fairness",
     "0.75 disagrees with Jain's index over ranks[].throughput_per_s"),
    (lambda r: r["ranks"][1]["verification"].update(ok=False), "results[0].verified",
     "true, but ranks[1].verification.ok is false"),
    (lambda r: r.update(status="failed", error="oom", aggregate=None), "results[0].aggregate",
     "null, but window_s holds 3 measured repetitions"),
]


@pytest.mark.parametrize("mutate, field, words", CONSISTENCY, ids=[f"{c[1]}-{i}" for i, c in enumerate(CONSISTENCY)])
def test_disagreeing_fields_are_refused(tmp_path: Path, mutate: Callable[[dict], Any], field: str,
                                        words: str) -> None:
    doc = _doc()
    mutate(_result_of(doc))
    message = _refused(tmp_path, doc)
    assert message.startswith(f"field {field}: ") and words in message, message


def test_the_unmutated_document_loads(tmp_path: Path) -> None:
    # the baseline of every refusal above: the same document without the mutation is accepted
    rs = load_results([builder.write(tmp_path / "ok.json", _doc())])
    assert rs.results.loc[0, "throughput"] == 1.1 * T


def test_failed_record_with_partial_ranks_is_refused(tmp_path: Path) -> None:
    doc = _doc(status="failed")
    _result_of(doc)["ranks"].pop()
    assert _refused(tmp_path, doc) == "field results[0].ranks: 1 entry, but active_ranks is 2"


def test_idle_ranks_do_not_count_against_fairness(tmp_path: Path) -> None:
    # Jain's index of equal shares is 1, and of (x, 0) it is 1/2, as harness/stats.cpp computes it
    doc = _doc(fairness=0.5)
    _result_of(doc)["ranks"][1]["throughput_per_s"] = 0.0
    assert load_results([builder.write(tmp_path / "j.json", doc)]).results.loc[0, "jain_fairness"] == 0.5
