"""What only the walk over every value (mpsbench_analysis.json_values, issue 37) refuses: the schema allows fields
it does not know (a newer writer's), so a key no writer produces inside one reaches no other check, and where a
file has several bad values the walk alone decides which one the line names (the first in the file)."""

from __future__ import annotations

from pathlib import Path

import pytest

import builder
from mpsbench_analysis import AnalysisError, load_results

T = 1e12


def _doc() -> dict:
    return builder.document([builder.result([T, 1.1 * T, 1.2 * T], ranks_per_gpu=2)])


def _refusal(tmp_path: Path, doc: dict) -> str:
    path = builder.write(tmp_path / "bad.json", doc)
    with pytest.raises(AnalysisError) as err:
        load_results([path])
    return str(err.value)[len(f"{path}: "):]


def test_the_document_without_the_bad_values_loads(tmp_path: Path) -> None:
    # the baseline of the refusals below: an unknown field of good values is accepted
    doc = _doc()
    doc["context"]["written_by_a_newer_tool"] = {"figure": 1.5, "note": "été"}
    assert len(load_results([builder.write(tmp_path / "ok.json", doc)]).results) == 1


def test_a_key_that_is_not_valid_unicode_is_refused(tmp_path: Path) -> None:
    # json.dumps writes the key as the escape "\udc80", which json.loads accepts; it cannot be printed or written
    doc = _doc()
    doc["context"]["written_by_a_newer_tool"] = {"\udc80": 1}
    assert _refusal(tmp_path, doc) == ("field context.written_by_a_newer_tool: key: string is not valid Unicode "
                                       "(a lone surrogate escape)")


def test_the_first_of_several_bad_values_in_file_order_is_named(tmp_path: Path) -> None:
    doc = _doc()
    doc["context"]["written_by_a_newer_tool"] = {"first": float("nan"), "second": float("inf")}
    assert _refusal(tmp_path, doc) == "field context.written_by_a_newer_tool.first: not a finite number (NaN)"
