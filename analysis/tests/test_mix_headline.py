"""A mix's headline hides no starved tenant (issue 28): the summary shows it no size (the 0 mpsbench writes)
and no gain over timeslice (an aggregate gain of 1.42x said nothing of inference slowed 200x); its verdict
names the tenant each mode slows."""

from __future__ import annotations

from pathlib import Path

import builder
import figure_docs
from fuzzing import run_cli


def _mix_file(tmp_path: Path) -> Path:
    return builder.write(tmp_path / "mix.json", figure_docs.mix_doc(("timeslice", "mps"), devices=1))


def test_a_mix_row_has_no_size_and_no_gain(tmp_path: Path) -> None:
    code, out, _ = run_cli(["summary", "--format", "markdown", str(_mix_file(tmp_path))])
    assert code == 0
    lines = out.splitlines()
    header = [c.strip() for c in next(line for line in lines if line.startswith("| kernel")).strip("|").split("|")]
    rows = [[c.strip() for c in line.strip("|").split("|")] for line in lines if line.startswith("| mix")]
    assert rows, out
    for row in rows:
        cells = dict(zip(header, row))
        assert cells["size"] == "-" and cells["vs timeslice"] == "-", cells


def test_the_mix_verdict_names_the_tenant_each_mode_slows(tmp_path: Path) -> None:
    code, out, _ = run_cli(["verdict", str(_mix_file(tmp_path))])
    line = next(line for line in out.splitlines() if line.startswith("verdict: mix "))
    # figure_docs.mix_doc: the inference tenant alone against each mode (slowdown, p99 ratio as written)
    assert code == 0 and "time slicing slows inference 2.50x (p99 4.00x alone) and matmul 1.67x" in line, line
    assert "plain MPS slows inference 1.33x (p99 2.00x alone)" in line, line
    assert line.endswith("no mode measured keeps inference within 1.5x (the least harm: plain MPS, 2.00x)"), line
    assert "pays off at every size measured (0)" not in out
