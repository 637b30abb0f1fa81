"""The crossover of applications (kernel app, no size): across copies per GPU, worked out by hand.

"myapp" runs/s by copies per GPU k = 1, 2, 4, 8:
  timeslice 1.0, 2.0, 2.0, 2.0;  mps 1.0, 2.1, 2.4, 3.0
  gains     1.0, 1.05, 1.2, 1.5
-> at threshold 1.1 MPS pays off from k = 4 on (1.2, 1.5 >= 1.1), still below at k = 2.
"dipapp": timeslice 1, 2, 2, 2; mps 1, 2.6, 2.4, 2.1 -> gains 1.0, 1.3, 1.2, 1.05: pays off at 2 and 4
but not at the largest count, 8.
"qosapp" (mps-qos at 100/k percent, as mpsbench-sweep runs it): timeslice 1, 2, 2 at k = 1, 2, 4;
mps-qos:100% 1.0, mps-qos:50% 2.4, mps-qos:25% 3.0 -> gains 1.0, 1.2, 1.5.
"""

from __future__ import annotations

import csv
import io
import json
from pathlib import Path

import pytest

import builder
from conftest import sweep_results
from mpsbench_analysis import AnalysisError, load_results
from mpsbench_analysis.cli import main
from mpsbench_analysis.crossover import (all_crossovers, crossovers, find_ranks_crossover, ranks_crossovers,
                                         render_crossovers)

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


def _by_name(found) -> dict:
    return {(c.precision, c.mode): c for c in found}


@pytest.mark.parametrize("ks, gains, expected", [
    (KS, [1.0, 1.05, 1.2, 1.5], (4, 2, "from")),
    (KS, [1.2, 1.0, 1.3, 1.4], (4, 2, "from")),       # pays off at 1, dips at 2: from 4, not from 1
    (KS, [1.1, 1.2, 1.3, 1.4], (1, None, "every")),   # 1.1 >= 1.1: equality pays off
    (KS, [1.0, 1.0, 1.05, 1.09], (None, 8, "never")),
    (KS, [1.0, 1.3, 1.2, 1.05], (None, 8, "largest")),
    ([2], [1.5], (2, None, "every")),
    ([2], [1.0], (None, 2, "never")),
])
def test_find_ranks_crossover(ks: list[int], gains: list[float], expected: tuple) -> None:
    assert find_ranks_crossover(ks, gains, 1.1) == expected


def test_app_crossover_by_hand(app_file: Path) -> None:
    found = _by_name(ranks_crossovers(load_results([app_file])))
    assert set(found) == {("myapp", "mps"), ("dipapp", "mps")}  # qosapp has no mps
    c = found[("myapp", "mps")]
    assert list(c.table["ranks_per_gpu"]) == KS
    assert list(c.table["gain"]) == pytest.approx([1.0, 1.05, 1.2, 1.5])
    assert list(c.table["pays_off"]) == [False, False, True, True]
    assert (c.ranks, c.below, c.outcome) == (4, 2, "from")
    assert c.message == ("MPS pays off from 4 copies per GPU: gain >= 1.1 at every measured count >= 4, still below "
                         "at 2; use MPS with 4 or more copies per GPU")
    d = found[("dipapp", "mps")]
    assert (d.ranks, d.below, d.outcome) == (None, 8, "largest")
    assert d.message == ("no crossover: MPS does not pay off at the largest measured count, 8 copies per GPU "
                         "(gain >= 1.1 only at 2, 4)")


@pytest.mark.parametrize("threshold, ranks, below, outcome, words", [
    (1.0, 1, None, "every", "MPS pays off at every measured copies-per-GPU count (gain >= 1 from 1 to 8 copies"),
    (1.25, 8, 4, "from", "MPS pays off from 8 copies per GPU"),           # 1.2 < 1.25 <= 1.5
    (1.6, None, 8, "never", "MPS never pays off: gain < 1.6 at every measured count (1 to 8 copies per GPU)"),
])
def test_app_crossover_thresholds(app_file: Path, threshold: float, ranks, below, outcome: str, words: str) -> None:
    c = _by_name(ranks_crossovers(load_results([app_file]), threshold))[("myapp", "mps")]
    assert (c.ranks, c.below, c.outcome) == (ranks, below, outcome)
    assert c.message.startswith(words)


def test_mps_qos_at_100_over_k_is_one_series(app_file: Path) -> None:
    found = _by_name(ranks_crossovers(load_results([app_file]), mode="mps-qos"))
    assert set(found) == {("qosapp", "mps-qos")}
    c = found[("qosapp", "mps-qos")]
    assert list(c.table["mode_label"]) == ["mps-qos:100%", "mps-qos:50%", "mps-qos:25%"]
    assert list(c.table["gain"]) == pytest.approx([1.0, 1.2, 1.5])
    assert (c.ranks, c.below, c.outcome) == (2, 1, "from")
    text = render_crossovers([c], "table")
    assert "qosapp, across copies per GPU, mps-qos" in text and "mps-qos:50%" in text  # which label at each k
    # one label asked for: only its count
    one = ranks_crossovers(load_results([app_file]), mode="mps-qos:50%")
    assert [(c.precision, list(c.table["ranks_per_gpu"]), c.outcome) for c in one] == [("qosapp", [2], "every")]


def test_size_api_still_refuses_apps(app_file: Path) -> None:
    with pytest.raises(AnalysisError, match="no result has a problem size, and this crossover is a size"):
        crossovers(load_results([app_file]))


def test_cli_app_crossover_formats(app_file: Path, capsys) -> None:
    assert main(["crossover", str(app_file)]) == 0
    text = capsys.readouterr().out
    assert "myapp, across copies per GPU\n  MPS pays off from 4 copies per GPU" in text
    block = text[text.index("app myapp"):]
    lines = block.splitlines()
    assert lines[3].split() == ["copies/gpu", "mps", "timeslice", "gain", "gain", ">=", "1.1"]
    assert lines[5].split() == ["1", "1.00", "run/s", "1.00", "run/s", "1.000", "no"]
    assert lines[8].split() == ["8", "3.00", "run/s", "2.00", "run/s", "1.500", "yes"]
    assert main(["crossover", str(app_file), "--format", "markdown"]) == 0
    md = capsys.readouterr().out
    assert "### app myapp, across copies per GPU\n\n**MPS pays off from 4 copies per GPU" in md
    assert "| 4 | 2.40 run/s | 2.00 run/s | 1.200 | yes |" in md
    assert main(["crossover", str(app_file), "--format", "json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    mine = next(c for c in doc["crossovers"] if c["precision"] == "myapp")
    assert (mine["axis"], mine["crossover_ranks_per_gpu"], mine["below_ranks_per_gpu"], mine["outcome"]) == (
        "ranks_per_gpu", 4, 2, "from")
    assert [row["ranks_per_gpu"] for row in mine["table"]] == KS and mine["table"][3]["gain"] == pytest.approx(1.5)


def test_mixed_file_crossovers_of_both_kinds(mixed_file: Path, capsys) -> None:
    found = all_crossovers(load_results([mixed_file]))
    kinds = [(c.kernel, c.precision, c.axis) for c in found]
    assert kinds == [("matmul", "fp32", "size"), ("nbody", "fp32", "size"), ("app", "myapp", "ranks_per_gpu"),
                     ("app", "dipapp", "ranks_per_gpu")]
    assert (found[0].size, found[0].outcome) == (4096, "below")  # as test_crossover.py, the apps change nothing
    assert main(["crossover", str(mixed_file)]) == 0
    text = capsys.readouterr().out
    assert "matmul fp32, 4 ranks per GPU\n  MPS stops paying off at size 4096" in text
    assert "app myapp, across copies per GPU\n  MPS pays off from 4 copies per GPU" in text
    assert main(["crossover", str(mixed_file), "--format", "csv"]) == 0
    rows = list(csv.DictReader(io.StringIO(capsys.readouterr().out)))
    assert len(rows) == 3 + 2 + 4 + 4
    app = [r for r in rows if r["precision"] == "myapp"]
    assert [(r["ranks_per_gpu"], r["size"], r["crossover_ranks_per_gpu"], r["below_ranks_per_gpu"]) for r in app] == [
        (str(k), "", "4", "2") for k in KS]
    kernel = next(r for r in rows if r["kernel"] == "matmul")
    assert (kernel["ranks_per_gpu"], kernel["size"], kernel["crossover_size"], kernel["axis"]) == (
        "4", "256", "4096", "size")
    assert main(["crossover", str(mixed_file), "--format", "json"]) == 0
    axes = [c["axis"] for c in json.loads(capsys.readouterr().out)["crossovers"]]
    assert axes == ["size", "size", "ranks_per_gpu", "ranks_per_gpu"]


def test_ranks_option_applies_to_sizes_only(mixed_file: Path) -> None:
    found = all_crossovers(load_results([mixed_file]), ranks=2)
    assert [(c.kernel, c.precision) for c in found] == [("matmul", "fp32"), ("app", "myapp"), ("app", "dipapp")]
    assert found[0].ranks_per_gpu == 2 and found[1].outcome == "from"
    with pytest.raises(AnalysisError, match="no configuration at 3 ranks per GPU"):
        all_crossovers(load_results([mixed_file]), ranks=3)


def test_mps_qos_for_kernels_gives_one_crossover_per_percentage(mixed_file: Path) -> None:
    found = all_crossovers(load_results([mixed_file]), mode="mps-qos")
    # conftest's sweep: matmul 1024 at 2 ranks in mps-qos:25% and :50%; qosapp across k
    assert [(c.precision, c.mode) for c in found] == [("fp32", "mps-qos:25%"), ("fp32", "mps-qos:50%"),
                                                      ("qosapp", "mps-qos")]
    assert found[0].title == "matmul fp32, 2 ranks per GPU, mps-qos:25%"
    assert list(found[1].table["gain"]) == pytest.approx([11.0 / 10.5])


def test_no_mode_data_is_still_one_line(tmp_path: Path, capsys) -> None:
    path = builder.write(tmp_path / "ts.json", builder.document([builder.app_result([1.0, 1.1, 1.2])]))
    assert main(["crossover", str(path)]) == 2
    assert capsys.readouterr().err.strip() == (
        f"mpsbench-analyze: error: {path}: no configuration was measured in both mode mps and timeslice "
        "(modes present: timeslice)")


@pytest.mark.parametrize("argv", [["summary"], ["summary", "--format", "json"], ["summary", "--format", "csv"],
                                  ["summary", "--format", "markdown"], ["compare-self"], ["export"], ["report"],
                                  ["crossover", "--format", "markdown"]], ids=lambda a: "-".join(a))
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
    if argv[0] in ("summary", "compare", "export", "crossover"):
        assert "myapp" in out
    if which == "mixed" and argv[0] in ("summary", "compare"):
        assert "throttled:1/5" in out  # every 7th record has one throttled repetition
    if argv[0] == "report":
        page = (tmp_path / "r.html").read_text()
        assert "myapp" in page and "noise" in page
