"""One answer: on every committed results file, the sweep's console (harness/sweep: console_report, what
mpsbench-sweep prints at the end of a run), `mpsbench-analyze verdict` and the HTML report give the same
verdict sentences. They all call mpsbench_core.verdict; this test proves no caller reformats or filters
them, at the threshold each run recorded."""

from __future__ import annotations

import gzip
import html
import json
import sys
from pathlib import Path

import pytest

from conftest import recorded_results
from fuzzing import run_cli
from mpsbench_analysis import report
from mpsbench_core.sweep_settings import recorded_threshold

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO / "harness" / "sweep"))
from mpsbench_sweep.console_report import console_report  # noqa: E402


def committed_results_files() -> list[Path]:
    found = []
    for pattern in ("results/**/*.json*", "docs/**/*.json*", "analysis/tests/data/*.json*"):
        for path in sorted(REPO.glob(pattern)):
            raw = path.read_bytes()
            text = gzip.decompress(raw) if raw[:2] == b"\x1f\x8b" else raw
            doc = json.loads(text)
            if isinstance(doc, dict) and doc.get("schema") == "mpsbench-results":
                found.append(path)
    return found


FILES = committed_results_files()


def test_there_are_files_to_compare() -> None:
    assert len(FILES) >= 20, [str(p) for p in FILES]


@pytest.mark.usefixtures("shared_loads")  # the verdict command and recorded_results read each file once
@pytest.mark.parametrize("path", FILES, ids=[str(p.relative_to(REPO)) for p in FILES])
def test_console_cli_and_report_say_the_same(path: Path) -> None:
    raw = path.read_bytes()
    doc = json.loads(gzip.decompress(raw) if raw[:2] == b"\x1f\x8b" else raw)
    console = [line for line in console_report(doc, recorded_threshold(doc)).splitlines()
               if line.startswith(("verdict: ", "A/A ("))]
    code, out, err = run_cli(["verdict", str(path)])
    assert code == 0, err
    assert out.splitlines() == console
    aa = [line for line in console if line.startswith("A/A (")]
    console = [line for line in console if line.startswith("verdict: ")]
    # The report's answer table for every file; the whole page (figures: slow) for a few, below.
    page = report._answer_html(recorded_results(path), recorded_threshold(doc))
    for line in console:
        subject, _, sentence = line.removeprefix("verdict: ").partition(": ")
        assert html.escape(sentence, quote=False) in page or html.escape(sentence) in page, (subject, sentence)
    for line in aa:  # the A/A row too
        assert html.escape(line, quote=False) in page or html.escape(line) in page


WHOLE_PAGES = [p for p in FILES if p.name in ("command1-11.json.gz", "farm-small-kernels.json.gz")]


@pytest.mark.parametrize("path", WHOLE_PAGES, ids=[p.name for p in WHOLE_PAGES])
def test_the_whole_report_carries_the_console_sentences(path: Path) -> None:
    raw = path.read_bytes()
    doc = json.loads(gzip.decompress(raw))
    page = report.build_report(recorded_results(path))
    lines = [line for line in console_report(doc, recorded_threshold(doc)).splitlines() if line.startswith("verdict: ")]
    assert lines
    for line in lines:
        sentence = line.removeprefix("verdict: ").partition(": ")[2]
        assert html.escape(sentence, quote=False) in page or html.escape(sentence) in page, sentence
