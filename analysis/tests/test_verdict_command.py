"""`mpsbench-analyze verdict`: exactly the lines of core's verdict (what mpsbench-sweep prints at the end of the
run), at the threshold the run recorded; the report says the same sentences, prominently."""

from __future__ import annotations

import html
import json
import warnings
from pathlib import Path

import pytest

import builder
import figure_docs
from conftest import ALL_DATA_FILES, RECORDED_REPORTS, recorded_report, sweep_results
from fuzzing import run_cli
from mpsbench_analysis import load_results
from mpsbench_analysis.report import build_report
from mpsbench_core.records import results_of
from mpsbench_core.aa_check import aa_check
from mpsbench_core.verdict import GAIN_THRESHOLD, verdict_lines, verdicts

T = 1e12


def _records() -> list[dict]:
    """conftest's kernels, an application measured in mps and timeslice, one only in timeslice, a failed
    configuration, and a mix in timeslice (judged per tenant; its inference tenant alone gets a kernel verdict
    without mps)."""
    apps = [builder.app_result(builder.flat(v), mode, k, name="myapp")
            for mode, values in (("timeslice", (1.0, 1.9, 2.0)), ("mps", (1.0, 2.4, 3.2)))
            for k, v in zip((1, 2, 4), values)]
    apps.append(builder.app_result(builder.flat(0.5), "timeslice", 1, name="solo"))
    failed = builder.result([T], size=8192, ranks_per_gpu=2, mode="mps", status="failed", verified=False)
    return sweep_results() + apps + [failed] + builder.mix_sweep(("timeslice",))


def _file(tmp_path: Path, threshold: float | None = None, name: str = "run.json") -> Path:
    doc = builder.document(_records())
    if threshold is not None:
        doc["context"]["sweep"] = {"modes": ["timeslice", "mps"], "launcher": "mpirun", "jobs": [],
                                   "gain_threshold": threshold}
    return builder.write(tmp_path / name, doc)


def _expected(path: Path, threshold: float) -> str:
    """Core's verdict lines, then core's A/A row where the file has one: what the sweep printed."""
    docs = [json.loads(path.read_text())]
    aa = aa_check(results_of(docs)).line
    return "".join(line + "\n" for line in verdict_lines(verdicts(results_of(docs), threshold)) + ([aa] if aa else []))


def test_prints_exactly_cores_verdict_lines(tmp_path: Path) -> None:
    path = _file(tmp_path)
    code, out, err = run_cli(["verdict", str(path)])
    assert (code, err) == (0, "")
    assert out == _expected(path, GAIN_THRESHOLD)
    lines = out.splitlines()
    assert lines[-1].startswith("A/A (1 rank per GPU")
    lines = lines[:-1]
    assert [line.split(":")[1].strip() for line in lines] == ["matmul fp32", "nbody fp32",
                                                              "inference fp16 (hidden=2048,layers=4)", "myapp", "solo",
                                                              "mix matmul/fp32/2048"]
    assert lines[0].startswith("verdict: matmul fp32: MPS pays off at 256 and 1024 (gain above 1.1x); does not at 4096; "
                               "the crossover lies between 1024 and 4096")
    assert "; 1 round(s) failed or unverified, left out" in lines[0]
    assert lines[2] == "verdict: inference fp16 (hidden=2048,layers=4): no MPS verdict: mps not measured (measured: " \
                       "timeslice)"
    assert lines[3].startswith("verdict: myapp: best mps at 4 copies per GPU, 11,520 runs/hour (3.20x one copy alone; "
                               "1.60x [1.60x-1.60x] timeslice at 4 per GPU); MPS pays off at 2 and 4 copies per GPU "
                               "(gain above 1.1x); does not at 1 copy per GPU; the crossover lies between 1 and 2")
    # builder.mix_sweep in timeslice: inference alone 4,000 request/s, 1,600 in the mix (2.50x), its p50 (and so
    # its p99) 4 ms against 1 ms alone; matmul 20 against 12 TFLOP/s (1.67x)
    assert lines[5] == ("verdict: mix matmul/fp32/2048:2,inference/fp16/64:2: time slicing slows inference 2.50x (p99 "
                        "4.00x alone) and matmul 1.67x")


def test_threshold_the_run_recorded_then_the_option(tmp_path: Path) -> None:
    path = _file(tmp_path, threshold=1.25)
    code, out, _ = run_cli(["verdict", str(path)])
    assert code == 0 and out == _expected(path, 1.25) != _expected(path, GAIN_THRESHOLD)
    assert "MPS pays off at 256 (gain above 1.25x); does not at 1024 and 4096; the crossover lies between 256 and " \
           "1024" in out
    code, out, _ = run_cli(["verdict", str(path), "--threshold", "1.05"])
    assert code == 0 and out == _expected(path, 1.05)


def test_files_that_recorded_different_thresholds_need_the_option(tmp_path: Path) -> None:
    a = builder.write(tmp_path / "a.json", builder.document([builder.result(builder.flat(T), ranks_per_gpu=2)]))
    doc = json.loads(a.read_text())
    doc["context"]["sweep"] = {"modes": ["mps"], "launcher": "mpirun", "jobs": [], "gain_threshold": 1.2}
    doc["results"] = [builder.result(builder.flat(2 * T), ranks_per_gpu=2, mode="mps")]
    b = builder.write(tmp_path / "b.json", doc)
    first = json.loads(a.read_text())
    first["context"]["sweep"] = dict(doc["context"]["sweep"], gain_threshold=1.1)
    builder.write(a, first)
    code, _, err = run_cli(["verdict", str(a), str(b)])
    assert code == 2 and err == (f"mpsbench-analyze: error: {b}: field context.sweep.gain_threshold: gain threshold "
                                 f"1.2, but {a} recorded 1.1: give --threshold to judge them together\n")
    code, out, _ = run_cli(["verdict", str(a), str(b), "--threshold", "1.5"])
    assert code == 0 and out == "verdict: matmul fp32: MPS pays off at every size measured (1024; gain above 1.5x " \
                                "throughout); best ranks/GPU and MPS gain [95% interval] by size: 1024 k=2 2.00x " \
                                "[2.00x-2.00x]; one round: the spread between processes was not measured " \
                                "(mpsbench-sweep --rounds 2 or more)\n"


@pytest.mark.parametrize("value", ["1.1", 0, -1.0, True, None, [1.1]])
def test_a_recorded_threshold_that_is_not_a_positive_number_is_refused(tmp_path: Path, value) -> None:
    doc = builder.document([builder.result(builder.flat(T))])
    doc["context"]["sweep"] = {"modes": ["timeslice"], "launcher": "mpirun", "jobs": [], "gain_threshold": value}
    path = builder.write(tmp_path / "t.json", doc)
    code, _, err = run_cli(["verdict", str(path)])
    # The schema (a number above 0) or the verdict's own check refuses it, naming the field, in one line.
    assert code == 2 and err.startswith(f"mpsbench-analyze: error: {path}: field context.sweep.gain_threshold: ")
    assert len(err.splitlines()) == 1


def test_report_says_each_verdict_sentence_first(tmp_path: Path) -> None:
    path = _file(tmp_path, threshold=1.25)
    rs = load_results([path])
    page = build_report(rs)
    found = verdicts(rs.records(), 1.25)
    assert len(found) == 6
    # the subject cell may break after commas and slashes (<wbr>): the text is the same
    verdict_section = page[page.index('<section id="verdict">'):page.index('<section id="context">')].replace(
        "<wbr>", "")
    assert page.index('<section id="verdict">') < page.index('<section id="crossover">')
    for v in found:
        assert f'<td class="l verdict">{html.escape(v.sentence)}</td>' in verdict_section, v.sentence
        assert f'<td class="l what">{html.escape(v.subject)}</td>' in verdict_section
    assert "lies above 1.25x" in verdict_section


@pytest.mark.usefixtures("shared_loads")
@RECORDED_REPORTS
@pytest.mark.parametrize("path", ALL_DATA_FILES, ids=[p.name for p in ALL_DATA_FILES])
def test_every_recorded_file_has_cores_verdict(path: Path, tmp_path: Path) -> None:
    from conftest import read_doc
    code, out, err = run_cli(["verdict", str(path)])
    assert code == 0 and err == ""
    expected = verdict_lines(verdicts(results_of([read_doc(path)])))
    aa = aa_check(results_of([read_doc(path)])).line
    assert out.splitlines() == expected + ([aa] if aa else []) and expected
    page = recorded_report(path)
    for line in expected:
        assert html.escape(line.removeprefix("verdict: ").partition(": ")[2]) in page


def test_report_closes_its_figures(tmp_path: Path) -> None:
    """A sweep of many kernels makes more than matplotlib's 20 open figures; the report makes, embeds and
    closes them one at a time, so it never warns."""
    import matplotlib.pyplot as plt
    doc = figure_docs.sweep(("timeslice", "mps"), (1024,), ranks=(1, 2),
                            kernels=tuple(f"kernel{i}" for i in range(8)))
    path = figure_docs.write(tmp_path / "many.json", doc)
    before = len(plt.get_fignums())
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        code, out, err = run_cli(["report", str(path), "-o", str(tmp_path / "r.html")])
    assert (code, err) == (0, "") and len(plt.get_fignums()) == before
    assert (tmp_path / "r.html").read_text().count("<img ") == 8 * 3 > 20
