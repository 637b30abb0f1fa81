"""How a comparison reads: the terminal report and the Markdown page of a CI job, ending in the gate's line.

compare.py makes the verdict tables (Comparison); this module only shows them: a headline with the verdict
counts, the context differences, the throughput, MPS gain and p99 latency tables, the legend of the marks,
the configurations added and removed, and ``gate: pass (exit 0)`` or ``gate: FAIL (exit 1): why``.
"""

from __future__ import annotations

import math

import pandas as pd

from mpsbench_core.energy import format_per_unit
from mpsbench_core.units import format_number, format_percent, format_seconds

from .compare import Comparison
from .context import ContextDifference
from .regression_rule import SLOWER
from .quality import CPU_SLOWED_LEGEND
from .summary import GROUP, sort_rows
from .tables import Column, format_figure, render

#: The line under compare's tables.
LEGEND = ("marks: noise>T = relative noise of the median (1.2533 sd / (sqrt(n) median)) above the target T "
          "(the run's max_noise, else 2%); throttled:K/N = K of N repetitions ran with a throttled SM clock; "
          + CPU_SLOWED_LEGEND + "; on gain rows the marks of the two results divided (counts summed)")



def _p(value: float, row: pd.Series) -> str:
    return "-" if value is None or not math.isfinite(value) else f"{value:.3g}"


def _params_column(df: pd.DataFrame) -> list[Column]:
    """A params column where some row has parameters."""
    has = "params" in df and any(isinstance(v, str) and v for v in df["params"])
    return [Column("params", "params", left=True)] if has else []


def _result_columns(df: pd.DataFrame | None = None) -> list[Column]:
    return [
        Column("kernel", "kernel", left=True), Column("precision", "precision", left=True),
        *(_params_column(df) if df is not None else []),
        Column("size", "size"), Column("ranks_per_gpu", "ranks/gpu"), Column("mode_label", "mode", left=True),
        Column("base_median", "base median", lambda v, r: format_figure(v, r["unit"], r["kind"])),
        Column("new_median", "new median", lambda v, r: format_figure(v, r["unit"], r["kind"])),
        Column("change", "change", lambda v, r: format_percent(v, signed=True)),
        Column("p_value", "p", _p), Column("verdict", "verdict", left=True),
        Column("verified", "verified", left=True), Column("base_marks", "base marks", left=True),
        Column("new_marks", "new marks", left=True), Column("reason", "why", left=True),
    ]


def _latency_columns(df: pd.DataFrame) -> list[Column]:
    return [
        Column("kernel", "kernel", left=True), Column("precision", "precision", left=True), *_params_column(df),
        Column("size", "size"), Column("ranks_per_gpu", "ranks/gpu"), Column("mode_label", "mode", left=True),
        Column("base_p99_s", "base p99", lambda v, r: format_seconds(v)),
        Column("new_p99_s", "new p99", lambda v, r: format_seconds(v)),
        Column("change", "change", lambda v, r: format_percent(v, signed=True)),
        Column("p_value", "p", _p), Column("verdict", "verdict", left=True), Column("reason", "why", left=True),
    ]


def _energy_columns(df: pd.DataFrame) -> list[Column]:
    return [
        Column("kernel", "kernel", left=True), Column("precision", "precision", left=True), *_params_column(df),
        Column("size", "size"), Column("ranks_per_gpu", "ranks/gpu"), Column("mode_label", "mode", left=True),
        Column("base_per_unit", "base", lambda v, r: format_per_unit(v, r["energy_unit"])),
        Column("new_per_unit", "new", lambda v, r: format_per_unit(None if math.isnan(v) else v, r["energy_unit"])),
        Column("change", "change", lambda v, r: format_percent(v, signed=True)), Column("note", "note", left=True),
    ]


def _gain_columns(df: pd.DataFrame | None = None) -> list[Column]:
    return [
        Column("kernel", "kernel", left=True), Column("precision", "precision", left=True),
        *(_params_column(df) if df is not None else []),
        Column("size", "size"), Column("ranks_per_gpu", "ranks/gpu"),
        Column("base_gain", "base gain", lambda v, r: format_number(v, 3)),
        Column("new_gain", "new gain", lambda v, r: format_number(v, 3)),
        Column("change", "change", lambda v, r: format_percent(v, signed=True)),
        Column("p_value", "p", _p), Column("verdict", "verdict", left=True),
        Column("base_marks", "base marks", left=True), Column("new_marks", "new marks", left=True),
        Column("reason", "why", left=True),
    ]


def headline(c: Comparison) -> str:
    """One line: how many regressions, and the verdict counts."""
    counts = c.results["verdict"].value_counts()
    parts = [f"{counts[v]} {v}" for v in ("SLOWER", "FASTER", "NOISY", "SAME", "FAILED", "RECOVERED")
             if v in counts]
    lost = int((c.results["verified"] == "yes->NO").sum())
    gain_slower = int((c.gains["verdict"] == SLOWER).sum())
    latency_slower = int((c.latency["verdict"] == SLOWER).sum())
    extra = [f"{lost} lost verification"] if lost else []
    extra += [f"{gain_slower} smaller MPS gain"] if gain_slower else []
    extra += [f"{latency_slower} higher p99 latency"] if latency_slower else []
    status = "REGRESSION" if c.regressions else "no regression"
    return (f"{status}: {len(c.results)} matching results ({', '.join(parts)})"
            + (f"; {', '.join(extra)}" if extra else "")
            + f"; {len(c.added)} added, {len(c.removed)} removed")


def _keys(df: pd.DataFrame) -> list[str]:
    return [f"{r.kernel}/{r.precision}/{r.size}/ranks:{r.ranks_per_gpu}/mode:{r.mode_label}"
            + (f"/params:{r.params}" if getattr(r, "params", "") else "")
            for r in df.itertuples(index=False)]


def context_head(c: Comparison) -> str:
    """The first line of the context part of the report: the device and how many differences."""
    mismatches = sum(d.mismatch for d in c.context)
    notes = len(c.context) - mismatches
    counts = ([f"{mismatches} mismatch{'es' if mismatches != 1 else ''} (compared anyway: "
               f"--allow-context-mismatch)"] if mismatches else [])
    counts += [f"{notes} note{'s' if notes != 1 else ''}"] if notes else []
    return (f"context: {'BASE ' if mismatches else ''}{c.device}; "
            + (", ".join(counts) if counts else "no difference in the compared fields"))


def _kind(d: ContextDifference) -> str:
    return "mismatch" if d.mismatch else "note"


def gate_line(failures: list[str]) -> str:
    """'gate: FAIL (exit 1): why; why' or 'gate: pass (exit 0)'."""
    return f"gate: FAIL (exit 1): {'; '.join(failures)}" if failures else "gate: pass (exit 0)"


def render_comparison(c: Comparison, fmt: str, base_name: str, new_name: str,
                      failures: list[str] | None = None) -> str:
    """Terminal text (fmt 'table') or a Markdown page for a CI job ('markdown').

    ``failures``: the gate's reasons (:meth:`Comparison.gate_failures`),
    by default those of the default gate.
    """
    if failures is None:
        failures = c.gate_failures()
    rule = c.rule
    md = fmt == "markdown"
    out = []
    if md:
        out.append(f"## mpsbench compare\n\nBASE `{base_name}` vs NEW `{new_name}`\n\n**{headline(c)}**\n\n"
                   f"**{gate_line(failures)}**\n")
        out.append(f"Rule: change beyond ±{rule.threshold:.0%} of the median, and non-overlapping ranges "
                   f"or Mann-Whitney p < {rule.alpha:g} with cv <= {rule.max_cv:.0%}.\n")
        out.append("C" + context_head(c)[1:] + "\n\n" + "".join(f"- {_kind(d)}: `{d.describe()}`\n" for d in c.context))
    else:
        out.append(f"BASE {base_name}\nNEW  {new_name}\n{headline(c)}\n{context_head(c)}\n"
                   + "".join(f"  {_kind(d):<8}  {d.describe()}\n" for d in c.context))
    out.append(("### Throughput\n\n" if md else "throughput:\n") + render(c.results, _result_columns(c.results), fmt))
    if not c.gains.empty:
        gains = sort_rows(c.gains, GROUP)
        out.append(("### MPS gain over timeslice\n\n" if md else "MPS gain over timeslice:\n")
                   + render(gains, _gain_columns(gains), fmt))
    if not c.latency.empty:
        title = "request latency p99 (higher is worse: SLOWER = a higher p99; evidence from the ranks' p99s)"
        out.append((f"### {title[0].upper()}{title[1:]}\n\n" if md else f"{title}:\n")
                   + render(c.latency, _latency_columns(c.latency), fmt))
    if not c.energy.empty:
        title = f"energy per unit of work (notes, never fail the gate: up more than {rule.threshold:.0%}, or gone)"
        out.append((f"### {title[0].upper()}{title[1:]}\n\n" if md else f"{title}:\n")
                   + render(c.energy, _energy_columns(c.energy), fmt))
    out.append(LEGEND + "\n")
    for title, df in (("added (only in NEW)", c.added), ("removed (only in BASE)", c.removed)):
        if not df.empty:
            items = _keys(df)
            out.append((f"### {title.capitalize()}\n\n" + "".join(f"- `{k}`\n" for k in items)) if md
                       else f"{title}:\n" + "".join(f"  {k}\n" for k in items))
    if not md:
        out.append(gate_line(failures) + "\n")
    return "\n".join(out)
