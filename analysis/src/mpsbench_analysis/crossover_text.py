"""How the crossover command's answers read: the sentences of its other questions, and every format.

The default answer's sentence is the verdict's own (core); the other questions (``--ranks``, ``--mode``)
are phrased here the way core phrases a verdict, with the mode they ask about in place of MPS and, at a
fixed ranks per GPU, the gain by size alone.  Tables: the terminal, Markdown, CSV (one flat table, the
answer repeated on each row) and JSON.
"""

from __future__ import annotations

import json
from typing import Any, Sequence

import pandas as pd

from mpsbench_core.units import format_number
from mpsbench_core.series import Point, rounds_note, where

from .tables import Column, format_figure, json_value, render


def _mode_name(mode: str) -> str:
    return "MPS" if mode == "mps" else mode


def _copies(k: int | None) -> str:
    return f"{k} cop{'y' if k == 1 else 'ies'}"


def where_text(axis: str, points: Sequence[Point], threshold: float, mode: str) -> str:
    """Where ``mode`` pays off, does not, or the data cannot tell, by core's rule (mpsbench_core.series): over
    sizes (``axis`` "size") or copies per GPU ("copies")."""
    return where(points, threshold, axis, _mode_name(mode)) + rounds_note(points)


def gains_text(axis: str, points: Sequence[Point], best: bool) -> str:
    """``best ranks/GPU and gain by size: 256 k=4 2.00x [1.90x-2.10x], ...`` (``best``), ``gain by size: ...``,
    or ``gain by copies per GPU: 1 1.00x [...], ...``."""
    if axis != "size":
        return "gain by copies per GPU: " + ", ".join(f"{p.at} {p.gain_text}" for p in points)
    if best:
        return "best ranks/GPU and gain by size: " + ", ".join(f"{p.at} k={p.k}{p.against} {p.gain_text}" for p in points)
    return "gain by size: " + ", ".join(f"{p.at} {p.gain_text}" for p in points)


def table_columns(c: Any) -> list[Column]:
    """How an answer's gain table is shown (either axis)."""
    tail = [
        Column(c.mode, c.mode, lambda v, r: format_figure(v, r["unit"], c.kind)),
        Column("timeslice", "timeslice", lambda v, r: format_figure(v, r["unit"], c.kind)),
        Column("gain", "gain", lambda v, r: format_number(v, 3)),
        Column("gain_low", "95% low", lambda v, r: format_number(v, 3)),
        Column("gain_high", "95% high", lambda v, r: format_number(v, 3)),
        Column("pays_off", f"vs {c.threshold:g}x", lambda v, r: str(v)),
    ]
    if c.axis == "ranks_per_gpu":
        label = [Column("mode_label", "mode", left=True)] if "mode_label" in c.table else []
        return [Column("ranks_per_gpu", "copies/gpu"), *label, *tail]
    return [Column("size", "size"), Column("ranks_per_gpu", "ranks/gpu"), Column("timeslice_ranks_per_gpu", "ts ranks/gpu"),
            *tail]


_CSV_KEYS = ["kind", "kernel", "precision", "params", "mode", "question", "threshold", "axis", "size",
             "ranks_per_gpu", "timeslice_ranks_per_gpu", "mode_label", "throughput_mode", "timeslice", "unit", "gain", "gain_low", "gain_high",
             "pays_off", "outcome",
             "crossover_size", "crossover_ranks_per_gpu", "below_ranks_per_gpu"]


def flat_table(answers: list[Any]) -> pd.DataFrame:
    """Every answer's gains in one table (for CSV), the answer repeated on each row: a kernel's rows have
    their size and ranks per GPU and ``crossover_size``; an application's their copies per GPU (as
    ranks_per_gpu), no size, ``crossover_ranks_per_gpu`` and ``below_ranks_per_gpu``."""
    frames = []
    for c in answers:
        t = c.table.rename(columns={c.mode: "throughput_mode"})
        if "mode_label" not in t:
            t = t.assign(mode_label=c.mode)
        size_axis = c.axis == "size"
        frames.append(t.assign(
            kind=c.kind, kernel=c.kernel, precision=c.precision, params=c.params, mode=c.mode,
            question="fixed ranks per GPU" if c.ranks_per_gpu is not None else "verdict", threshold=c.threshold,
            axis=c.axis, outcome=c.outcome, crossover_size=c.crossover if size_axis else None,
            crossover_ranks_per_gpu=None if size_axis else c.crossover, below_ranks_per_gpu=c.below,
            **({} if size_axis else {"size": None, "timeslice_ranks_per_gpu": None})).astype(object))
    flat = pd.concat(frames, ignore_index=True) if frames else pd.DataFrame(columns=_CSV_KEYS)
    for column in ("size", "crossover_size", "crossover_ranks_per_gpu", "below_ranks_per_gpu", "ranks_per_gpu",
                   "timeslice_ranks_per_gpu"):
        flat[column] = flat[column].astype("Int64")
    return flat[_CSV_KEYS]


def render_crossovers(answers: list[Any], fmt: str) -> str:
    """Each answer's title, sentence and gain table in ``fmt`` (an answer without gains: its sentence)."""
    if fmt == "csv":
        return render(flat_table(answers), [Column(k, k) for k in _CSV_KEYS], "csv")
    if fmt == "json":
        return json.dumps({"crossovers": [json_value(c.to_json()) for c in answers]}, indent=1) + "\n"
    parts = []
    for c in answers:
        table = render(c.table, table_columns(c), fmt) if len(c.table) else ""
        if fmt == "markdown":
            parts.append(f"### {c.title}\n\n**{c.message}**\n\n{table}")
        else:
            parts.append(f"{c.title}\n  {c.message}\n" + (f"\n{table}" if table else ""))
    return "\n".join(parts)
