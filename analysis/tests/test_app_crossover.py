"""The verdict of applications (kind app, no size): the best way to farm each, and the copies per GPU from
which MPS pays off, worked out by hand (core's definitions, mpsbench_core.verdict).

"myapp" runs/s by copies per GPU k = 1, 2, 4, 8:
  timeslice 1.0, 2.0, 2.0, 2.0;  mps 1.0, 2.1, 2.4, 3.0
  gains     1.0, 1.05, 1.2, 1.5
-> at threshold 1.1 MPS pays off at k = 4 and 8 (1.2, 1.5 > 1.1), not at 1 and 2: the crossover lies between
2 and 4; the best configuration is mps at 8 copies, 3.0 runs/s = 10,800 runs/hour, 3x one copy alone, 1.5x
timeslice at 8. (One round, repetitions that agree exactly: every interval is its point.)
"dipapp": timeslice 1, 2, 2, 2; mps 1, 2.6, 2.4, 2.1 -> gains 1.0, 1.3, 1.2, 1.05: pays off at 2 and 4
but not at 1 and 8 (no single crossover); the best is mps at 2 copies (2.6 runs/s).
"qosapp" (mps-qos at 100/k percent, as mpsbench-sweep runs it): timeslice 1, 2, 2 at k = 1, 2, 4;
mps-qos:100% 1.0, mps-qos:50% 2.4, mps-qos:25% 3.0 -> gains 1.0, 1.2, 1.5 (--mode mps-qos: one series);
it has no mps, so its verdict names the best configuration only (mps-qos:25% at 4 copies, 3.0 runs/s).
"""

from __future__ import annotations

import csv
import html
import io
import json
from pathlib import Path

import pytest

import builder
from conftest import sweep_results
from mpsbench_analysis import AnalysisError, load_results
from mpsbench_analysis.cli import main
from mpsbench_analysis.crossover import all_crossovers
from mpsbench_analysis.crossover_text import render_crossovers
from mpsbench_core.intervals import Interval
from mpsbench_core.series import Point, outcome as series_outcome

KS = [1, 2, 4, 8]


def _app(name: str, timeslice: list[float], mps: list[float], ks: list[int] = KS) -> list[dict]:
    out = []
    for k, t, m in zip(ks, timeslice, mps):
        out.append(builder.app_result(builder.flat(t), "timeslice", k, name=name))
        out.append(builder.app_result(builder.flat(m), "mps", k, name=name))
    return out


def _qos_app() -> list[dict]:
    out = []
    for k, t, q in zip([1, 2, 4], [1.0, 2.0, 2.0], [1.0, 2.4, 3.0]):
        out.append(builder.app_result(builder.flat(t), "timeslice", k, name="qosapp"))
        qos = builder.app_result(builder.flat(q), "mps-qos", k, name="qosapp")
        qos["mps_active_thread_percentage"] = 100 // k
        out.append(qos)
    return out


def _apps() -> list[dict]:
    return (_app("myapp", [1.0, 2.0, 2.0, 2.0], [1.0, 2.1, 2.4, 3.0])
            + _app("dipapp", [1.0, 2.0, 2.0, 2.0], [1.0, 2.6, 2.4, 2.1]) + _qos_app())


@pytest.fixture
def app_file(tmp_path: Path) -> Path:
    return builder.write(tmp_path / "apps.json", builder.document(_apps()))


@pytest.fixture
def mixed_file(tmp_path: Path) -> Path:
    """The kernels of conftest's sweep and the applications in one file, with the newer quality fields."""
    records = [builder.with_quality(r, affected=[0, 0, 0, 0, 1] if i % 7 == 0 else None)
               for i, r in enumerate(sweep_results() + _apps())]
    return builder.write(tmp_path / "mixed.json", builder.quality_settings(builder.document(records), max_noise=0.01))


def _apps_of(found) -> dict:
    return {(c.kernel, c.mode): c for c in found if c.kind == "app"}


MYAPP = ("best mps at 8 copies per GPU, 10,800 runs/hour (3.00x one copy alone; 1.50x [1.50x-1.50x] timeslice at 8 "
         "per GPU); MPS pays off at 4 and 8 copies per GPU (gain above 1.1x); does not at 1 and 2 copies per GPU; the "
         "crossover lies between 2 and 4 copies per GPU; MPS gain [95% interval] by copies per GPU: 1 1.00x "
         "[1.00x-1.00x], 2 1.05x [1.05x-1.05x], 4 1.20x [1.20x-1.20x], 8 1.50x [1.50x-1.50x]; one round: the spread "
         "between processes was not measured (mpsbench-sweep --rounds 2 or more)")


def _points(ks: list[int], intervals: list[tuple[float, float]]) -> list[Point]:
    return [Point(k, k, 1.0, 1.0, Interval((lo + hi) / 2, lo, hi, 2, "rounds", 5, 2.571, 0.01, None, None, 0, 0.0))
            for k, (lo, hi) in zip(ks, intervals)]


@pytest.mark.parametrize("ks, intervals, expected", [
    (KS, [(0.9, 1.0), (1.0, 1.05), (1.15, 1.25), (1.4, 1.6)], ("from", (2, 4))),
    (KS, [(0.9, 1.0), (1.0, 1.3), (1.15, 1.25), (1.4, 1.6)], ("from", (1, 4))),  # 2 cannot tell: the range widens
    (KS, [(1.2, 1.3), (1.0, 1.05), (1.3, 1.4), (1.4, 1.5)], ("mixed", None)),    # pays off at 1, dips at 2
    (KS, [(1.12, 1.2), (1.2, 1.3), (1.3, 1.4), (1.4, 1.5)], ("every", None)),
    (KS, [(1.05, 1.2), (1.2, 1.3), (1.3, 1.4), (1.4, 1.5)], ("mixed", None)),    # 1 cannot tell, none does not
    (KS, [(0.9, 1.0), (0.9, 1.0), (1.0, 1.09), (1.0, 1.05)], ("never", None)),
    (KS, [(0.9, 1.2), (0.95, 1.3), (1.0, 1.2), (1.0, 1.11)], ("unclear", None)),
    ([2], [(1.4, 1.6)], ("every", None)),
    ([], [], ("none", None)),
])
def test_series_outcome(ks: list[int], intervals: list[tuple[float, float]], expected: tuple) -> None:
    found = series_outcome(_points(ks, intervals), 1.1)
    assert (found.kind, found.between) == expected


def test_app_verdicts_by_hand(app_file: Path) -> None:
    found = _apps_of(all_crossovers(load_results([app_file])))
    assert set(found) == {("myapp", "mps"), ("dipapp", "mps"), ("qosapp", "mps")}
    c = found[("myapp", "mps")]
    assert list(c.table["ranks_per_gpu"]) == KS
    assert list(c.table["gain"]) == pytest.approx([1.0, 1.05, 1.2, 1.5])
    assert list(c.table["pays_off"]) == ["does not", "does not", "pays off", "pays off"]
    assert (c.crossover, c.below, c.outcome) == (4, 2, "from")
    assert c.message == MYAPP
    d = found[("dipapp", "mps")]
    assert (d.crossover, d.below, d.outcome) == (None, None, "mixed")
    assert d.message.startswith("best mps at 2 copies per GPU, 9,360 runs/hour (2.60x one copy alone; 1.30x "
                                "[1.30x-1.30x] timeslice at 2 per GPU); MPS pays off at 2 and 4 copies per GPU (gain "
                                "above 1.1x); does not at 1 and 8 copies per GPU; MPS gain")
    q = found[("qosapp", "mps")]  # no mps: the best configuration, and no table
    assert q.outcome == "none" and q.table.empty
    assert q.message == ("best mps-qos:25% at 4 copies per GPU, 10,800 runs/hour (3.00x one copy alone; 1.50x "
                         "[1.50x-1.50x] timeslice at 4 per GPU)")


@pytest.mark.parametrize("threshold, k, below, outcome, words", [
    (1.0, None, None, "mixed", "MPS pays off at 2, 4 and 8 copies per GPU (gain above 1x); cannot tell at 1 (1.00x-1.00x)"),
    (1.25, 8, 4, "from", "MPS pays off at 8 copies per GPU (gain above 1.25x); does not at 1, 2 and 4 copies per "
                         "GPU; the crossover lies between 4 and 8 copies per GPU"),   # 1.2 < 1.25 < 1.5
    (1.6, None, None, "never", "MPS does not pay off at any count measured (gain below 1.6x)"),
])
def test_app_thresholds(app_file: Path, threshold: float, k, below, outcome: str, words: str) -> None:
    c = _apps_of(all_crossovers(load_results([app_file]), threshold))[("myapp", "mps")]
    assert (c.crossover, c.below, c.outcome) == (k, below, outcome)
    assert words in c.message


def test_mps_qos_at_100_over_k_is_one_series(app_file: Path) -> None:
    found = _apps_of(all_crossovers(load_results([app_file]), mode="mps-qos"))
    assert set(found) == {("qosapp", "mps-qos")}
    c = found[("qosapp", "mps-qos")]
    assert c.title == "qosapp, across copies per GPU, mps-qos against timeslice"
    assert list(c.table["mode_label"]) == ["mps-qos:100%", "mps-qos:50%", "mps-qos:25%"]
    assert list(c.table["gain"]) == pytest.approx([1.0, 1.2, 1.5])
    assert (c.crossover, c.below, c.outcome) == (2, 1, "from")
    assert c.message == ("mps-qos pays off at 2 and 4 copies per GPU (gain above 1.1x); does not at 1 copy per GPU; "
                         "the crossover lies between 1 and 2 copies per GPU; one round: the spread between processes "
                         "was not measured (mpsbench-sweep --rounds 2 or more); gain by copies per GPU: 1 1.00x "
                         "[1.00x-1.00x], 2 1.20x [1.20x-1.20x], 4 1.50x [1.50x-1.50x]")
    text = render_crossovers([c], "table")
    assert "mps-qos:50%" in text  # which label at each k
    # one label asked for: only its count
    one = all_crossovers(load_results([app_file]), mode="mps-qos:50%")
    assert [(c.kernel, list(c.table["ranks_per_gpu"]), c.outcome) for c in one] == [("qosapp", [2], "every")]


def test_cli_app_crossover_formats(app_file: Path, capsys) -> None:
    assert main(["crossover", str(app_file)]) == 0
    text = capsys.readouterr().out
    assert f"myapp, across copies per GPU\n  {MYAPP}\n" in text
    block = text[text.index("myapp, across"):]
    lines = block.splitlines()
    assert lines[3].split() == ["copies/gpu", "mps", "timeslice", "gain", "95%", "low", "95%", "high", "vs", "1.1x"]
    assert lines[5].split() == ["1", "1.00", "run/s", "1.00", "run/s", "1.000", "1.000", "1.000", "does", "not"]
    assert lines[8].split() == ["8", "3.00", "run/s", "2.00", "run/s", "1.500", "1.500", "1.500", "pays", "off"]
    assert main(["crossover", str(app_file), "--format", "markdown"]) == 0
    md = capsys.readouterr().out
    assert f"### myapp, across copies per GPU\n\n**{MYAPP}**" in md
    assert "| 4 | 2.40 run/s | 2.00 run/s | 1.200 | 1.200 | 1.200 | pays off |" in md
    assert main(["crossover", str(app_file), "--format", "json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    mine = next(c for c in doc["crossovers"] if c["kernel"] == "myapp")
    assert (mine["kind"], mine["axis"], mine["crossover_ranks_per_gpu"], mine["below_ranks_per_gpu"],
            mine["outcome"]) == ("app", "ranks_per_gpu", 4, 2, "from")
    assert [row["ranks_per_gpu"] for row in mine["table"]] == KS and mine["table"][3]["gain"] == pytest.approx(1.5)


def test_mixed_file_answers_of_both_kinds(mixed_file: Path, capsys) -> None:
    found = all_crossovers(load_results([mixed_file]))
    kinds = [(c.kind, c.kernel, c.axis) for c in found]
    assert kinds == [("kernel", "matmul", "size"), ("kernel", "nbody", "size"), ("app", "myapp", "ranks_per_gpu"),
                     ("app", "dipapp", "ranks_per_gpu"), ("app", "qosapp", "ranks_per_gpu")]
    assert (found[0].crossover, found[0].outcome) == (4096, "below")  # as test_crossover.py: apps change nothing
    assert main(["crossover", str(mixed_file)]) == 0
    text = capsys.readouterr().out
    assert "matmul fp32, best ranks per GPU at each size\n  MPS pays off at 256 and 1024" in text
    assert f"myapp, across copies per GPU\n  {MYAPP}" in text
    assert main(["crossover", str(mixed_file), "--format", "csv"]) == 0
    rows = list(csv.DictReader(io.StringIO(capsys.readouterr().out)))
    assert len(rows) == 3 + 2 + 4 + 4  # qosapp has no gain without mps
    app = [r for r in rows if r["kernel"] == "myapp"]
    assert [(r["ranks_per_gpu"], r["size"], r["crossover_ranks_per_gpu"], r["below_ranks_per_gpu"]) for r in app] == [
        (str(k), "", "4", "2") for k in KS]
    kernel = next(r for r in rows if r["kernel"] == "matmul")
    assert (kernel["ranks_per_gpu"], kernel["size"], kernel["crossover_size"], kernel["axis"]) == (
        "4", "256", "4096", "size")
    assert main(["crossover", str(mixed_file), "--format", "json"]) == 0
    axes = [c["axis"] for c in json.loads(capsys.readouterr().out)["crossovers"]]
    assert axes == ["size", "size", "ranks_per_gpu", "ranks_per_gpu", "ranks_per_gpu"]


def test_ranks_option_asks_about_kernels(mixed_file: Path) -> None:
    found = all_crossovers(load_results([mixed_file]), ranks=2)
    assert [(c.kernel, c.precision, c.ranks_per_gpu) for c in found] == [("matmul", "fp32", 2)]
    with pytest.raises(AnalysisError, match="no kernel configuration at 3 ranks per GPU"):
        all_crossovers(load_results([mixed_file]), ranks=3)


def test_mps_qos_for_kernels_gives_one_answer_per_percentage(mixed_file: Path) -> None:
    found = all_crossovers(load_results([mixed_file]), mode="mps-qos")
    # conftest's sweep: matmul 1024 at 2 ranks in mps-qos:25% and :50%; qosapp across k
    assert [(c.kernel, c.mode) for c in found] == [("matmul", "mps-qos:25%"), ("matmul", "mps-qos:50%"),
                                                   ("qosapp", "mps-qos")]
    assert found[0].title == "matmul fp32, best ranks per GPU at each size, mps-qos:25% against timeslice"
    # mps-qos:50% at k=2: 11 against timeslice's best at 1024, 11 at k=4
    assert list(found[1].table["gain"]) == pytest.approx([11.0 / 11.0])
    assert found[1].message == ("mps-qos:50% does not pay off at any size measured (gain below 1.1x); one round: the "
                                "spread between processes was not measured (mpsbench-sweep --rounds 2 or more); best "
                                "ranks/GPU and gain by size: 1024 k=2 vs timeslice k=4 1.00x [1.00x-1.00x]")


def test_no_mode_data_is_still_one_line(tmp_path: Path, capsys) -> None:
    path = builder.write(tmp_path / "ts.json", builder.document([builder.app_result([1.0, 1.1, 1.2])]))
    assert main(["crossover", str(path)]) == 2
    assert capsys.readouterr().err.strip() == (
        f"mpsbench-analyze: error: {path}: no configuration was measured in both mode mps and timeslice "
        "(modes present: timeslice)")


@pytest.mark.parametrize("argv", [["summary"], ["summary", "--format", "json"], ["summary", "--format", "csv"],
                                  ["summary", "--format", "markdown"], ["compare-self"], ["export"], ["report"],
                                  ["crossover", "--format", "markdown"], ["verdict"]], ids=lambda a: "-".join(a))
@pytest.mark.parametrize("which", ["apps", "mixed"])
def test_every_command_on_app_and_mixed_files(app_file: Path, mixed_file: Path, tmp_path: Path, capsys,
                                              argv: list[str], which: str) -> None:
    path = str(app_file if which == "apps" else mixed_file)
    if argv == ["compare-self"]:
        argv = ["compare", path, path]
    elif argv == ["report"]:
        argv = ["report", path, "-o", str(tmp_path / "r.html")]
    else:
        argv = [argv[0], path, *argv[1:]]
    assert main(argv) == 0, capsys.readouterr().err
    out = capsys.readouterr().out
    if argv[0] in ("summary", "compare", "export", "crossover", "verdict"):
        assert "myapp" in out
    if which == "mixed" and argv[0] in ("summary", "compare"):
        assert "throttled:1/5" in out  # every 7th kernel record has one throttled repetition
    if argv[0] == "report":
        page = (tmp_path / "r.html").read_text()
        assert "myapp" in page and "noise" in page and html.escape(MYAPP) in page
