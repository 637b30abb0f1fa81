"""crossover against the fixture's gains, worked out by hand, with the verdict's definition (core).

At each size the verdict takes, in each mode, the fewest ranks per GPU whose throughput is within noise of
that mode's fastest; the gain is the best of mps over the best of timeslice, and it pays off where its 95 %
interval lies above the threshold.  These records have one round and repetitions that agree exactly, so
every interval is its point: the rule reduces to the gain against the threshold, equality "cannot tell".  conftest's matmul fp32:
  256: mps 2.0, 3.3, 4.8 at k = 1, 2, 4 -> k = 4; timeslice 2.0, 2.2, 2.4 -> k = 4: gain 4.8 / 2.4 = 2.0
  1024: mps 10, 12.6, 13.2 -> k = 4; timeslice 10, 10.5, 11 -> k = 4: 13.2 / 11 = 1.2
  4096: mps 40, 41, 42 -> k = 4; timeslice 40 at every k -> k = 1 (the fewest within noise): 42 / 40 = 1.05
and at a fixed 2 ranks (--ranks 2): 3.3 / 2.2 = 1.5, 12.6 / 10.5 = 1.2, 41 / 40 = 1.025.
nbody fp32 (k = 1, 4): 256: mps 1.0 at both -> k = 1 (the tie), 1.0 / 1.0; 1024: k = 4, 1.3 / 1.0 = 1.3.

The case of issue 24: the fastest mps configuration is at 2 ranks per GPU while the largest count measured
in both modes, 4, is slower under mps.  The definition of the analysis before (the largest k measured in
both) said MPS stops paying off at the smallest size; the sweep's said it pays off below 8192.  Both now
say the verdict's.
"""

from __future__ import annotations

import html
from pathlib import Path

import pytest

import builder
from mpsbench_analysis import AnalysisError, load_results
from mpsbench_analysis.cli import main
from mpsbench_analysis.crossover import all_crossovers
from mpsbench_analysis.crossover_text import render_crossovers
from mpsbench_core.verdict import KernelVerdict, verdicts

T = 1e12


def _by_kernel(path: Path, **kw):
    return {c.kernel: c for c in all_crossovers(load_results([path]), **kw)}


def test_default_is_the_verdict_best_ranks_per_gpu_at_each_size(sweep_file: Path) -> None:
    found = _by_kernel(sweep_file)
    m = found["matmul"]
    assert (m.ranks_per_gpu, m.mode, m.threshold) == (None, "mps", 1.1)
    assert list(m.table["size"]) == [256, 1024, 4096] and list(m.table["ranks_per_gpu"]) == [4, 4, 4]
    assert list(m.table["gain"]) == pytest.approx([2.0, 1.2, 1.05])
    # 1.05 < 1.1 at 4096 only, 1.2 > 1.1 at 1024 -> the crossover lies between 1024 and 4096
    assert (m.crossover, m.outcome) == (4096, "below")
    assert m.message == ("MPS pays off at 256 and 1024 (gain above 1.1x); does not at 4096; the crossover lies "
                         "between 1024 and 4096; best ranks/GPU and MPS gain [95% interval] by size: 256 k=4 2.00x "
                         "[2.00x-2.00x], 1024 k=4 1.20x [1.20x-1.20x], 4096 k=4 vs timeslice k=1 1.05x [1.05x-1.05x]; "
                         "one round: the spread between processes was not measured (mpsbench-sweep --rounds 2 or more)")
    assert list(m.table["timeslice_ranks_per_gpu"]) == [4, 4, 1]
    assert list(m.table["pays_off"]) == ["pays off", "pays off", "does not"]
    n = found["nbody"]
    assert list(n.table["ranks_per_gpu"]) == [1, 4]  # a tie at 256: the fewer ranks are within noise of the fastest
    assert (n.crossover, n.outcome) == (1024, "from")
    assert "does not at 256; the crossover lies between 256 and 1024" in n.message
    # the same sentence as core's verdict of the same records
    records = load_results([sweep_file]).records()
    assert [c.message for c in found.values()] == [v.sentence for v in verdicts(records)]


def _issue_case() -> list[dict]:
    """mps gains by size at k = 2: 1.24, 1.11, 1.12, 1.0; at k = 4 mps is slower than at 2 everywhere, with
    gains 1.0, 0.9, 0.8, 0.7 against timeslice at 4."""
    out = []
    for size, g2, g4 in ((1024, 1.24, 1.0), (2048, 1.11, 0.9), (4096, 1.12, 0.8), (8192, 1.0, 0.7)):
        out += [builder.result(builder.flat(10 * T), size=size, ranks_per_gpu=2, mode="timeslice"),
                builder.result(builder.flat(10 * g2 * T), size=size, ranks_per_gpu=2, mode="mps"),
                builder.result(builder.flat(10 * T), size=size, ranks_per_gpu=4, mode="timeslice"),
                builder.result(builder.flat(10 * g4 * T), size=size, ranks_per_gpu=4, mode="mps")]
    return out


def test_best_ranks_per_gpu_not_the_largest_measured(tmp_path: Path, capsys) -> None:
    path = builder.write(tmp_path / "issue.json", builder.document(_issue_case()))
    sentence = ("MPS pays off at 1024, 2048 and 4096 (gain above 1.1x); does not at 8192; the crossover lies between "
                "4096 and 8192; best ranks/GPU and MPS gain [95% interval] by size: 1024 k=2 1.24x [1.24x-1.24x], "
                "2048 k=2 1.11x [1.11x-1.11x], 4096 k=2 1.12x [1.12x-1.12x], 8192 k=2 1.00x [1.00x-1.00x]; one round: "
                "the spread between processes was not measured (mpsbench-sweep --rounds 2 or more)")
    (c,) = all_crossovers(load_results([path]))
    assert c.message == sentence and (c.crossover, c.outcome) == (8192, "below")
    assert main(["verdict", str(path)]) == 0
    assert capsys.readouterr().out == f"verdict: matmul fp32: {sentence}\n"
    report = tmp_path / "r.html"
    assert main(["report", str(path), "-o", str(report)]) == 0
    assert html.escape(sentence) in report.read_text()
    # the fixed-k question is still there, asked explicitly, and answers what it asks
    (fixed,) = all_crossovers(load_results([path]), ranks=4)
    assert fixed.title == "matmul fp32, at 4 ranks per GPU (fixed)"
    assert (fixed.crossover, fixed.outcome) == (None, "never")


@pytest.mark.parametrize("threshold, size, outcome", [
    (1.25, 1024, "below"),   # 1.2 and 1.05 < 1.25, 2.0 > 1.25
    (2.5, None, "never"),    # every gain < 2.5
    (1.0, None, "every"),    # every gain > 1.0
    (1.05, None, "mixed"),   # 1.05 at 1.05: an interval that holds the threshold cannot tell
])
def test_thresholds(sweep_file: Path, threshold: float, size, outcome: str) -> None:
    m = _by_kernel(sweep_file, threshold=threshold)["matmul"]
    assert (m.crossover, m.outcome) == (size, outcome)


def test_ranks_option_is_another_question(sweep_file: Path) -> None:
    found = all_crossovers(load_results([sweep_file]), ranks=2)
    assert [c.kernel for c in found] == ["matmul"]  # nbody has no 2-rank runs
    c = found[0]
    assert c.title == "matmul fp32, at 2 ranks per GPU (fixed)"
    assert list(c.table["gain"]) == pytest.approx([1.5, 1.2, 1.025])
    assert c.crossover == 4096
    assert c.message == ("MPS pays off at 256 and 1024 (gain above 1.1x); does not at 4096; the crossover lies "
                         "between 1024 and 4096; one round: the spread between processes was not measured "
                         "(mpsbench-sweep --rounds 2 or more); gain by size: 256 1.50x [1.50x-1.50x], 1024 1.20x "
                         "[1.20x-1.20x], 4096 1.02x [1.02x-1.02x]")
    with pytest.raises(AnalysisError, match="no kernel configuration at 3 ranks per GPU"):
        all_crossovers(load_results([sweep_file]), ranks=3)


def test_a_dip_that_recovers_places_no_crossover(tmp_path: Path) -> None:
    # pays off at 1024, does not at 2048, pays off again at 4096: no single crossover, each said where it holds
    records = []
    for size, gain in ((1024, 1.5), (2048, 1.0), (4096, 1.3)):
        records += [builder.result(builder.flat(10 * T), size=size, ranks_per_gpu=2, mode="timeslice"),
                    builder.result(builder.flat(10 * gain * T), size=size, ranks_per_gpu=2, mode="mps")]
    (c,) = all_crossovers(load_results([builder.write(tmp_path / "dip.json", builder.document(records))]))
    assert (c.outcome, c.crossover) == ("mixed", None)
    assert c.message.startswith("MPS pays off at 1024 and 4096 (gain above 1.1x); does not at 2048; best ranks/GPU")


def test_renderings(sweep_file: Path) -> None:
    found = all_crossovers(load_results([sweep_file]))
    text = render_crossovers(found, "table")
    assert "matmul fp32, best ranks per GPU at each size\n  MPS pays off at 256 and 1024" in text and "1.050" in text
    assert "### matmul fp32" in render_crossovers(found, "markdown")
    csv = render_crossovers(found, "csv").splitlines()
    assert csv[0].startswith("kind,kernel,precision,params,mode,question,threshold,axis,size,ranks_per_gpu")
    assert len(csv) == 1 + 3 + 2


def test_kernel_without_both_modes_says_why_among_others(tmp_path: Path, capsys) -> None:
    records = [builder.result(builder.flat(T), ranks_per_gpu=2), builder.result(builder.flat(2 * T), ranks_per_gpu=2,
                                                                                 mode="mps"),
               builder.result(builder.flat(T), kernel="nbody", ranks_per_gpu=2)]
    path = builder.write(tmp_path / "f.json", builder.document(records))
    found = all_crossovers(load_results([path]))
    assert [(c.kernel, c.outcome) for c in found] == [("matmul", "every"), ("nbody", "none")]
    assert found[1].message == "no MPS verdict: mps not measured (measured: timeslice)"
    assert isinstance(verdicts(load_results([path]).records())[1], KernelVerdict)
