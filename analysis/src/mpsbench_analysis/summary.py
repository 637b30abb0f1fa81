"""The summary table and the MPS gain it is built around.

Definitions (all on the median of the primary aggregate throughput):
  gain_vs_timeslice = throughput / throughput of mode ``timeslice`` at the
      same kernel, precision, size and ranks_per_gpu; on ``mps`` rows this
      is the MPS gain.
  speedup = the file's ``speedup_vs_one_rank_per_gpu`` (the writer divides
      by the one-rank run of the same mode and size).
  efficiency = throughput / the best ranks_per_gpu == 1 throughput of the
      same kernel, precision and mode at any size: how much of one
      saturated process the sharing ranks reach together.
  noise = the relative standard error of the median throughput (the file's
      ``noise.relative``, else computed from the samples); ``marks`` flag a
      result whose noise is above its target (2 % without one) and one with
      clock-throttled repetitions (quality.py), explained by a legend line.
"""

from __future__ import annotations

import json
import math

import pandas as pd

from .loader import ResultSet, mode_sort_key
from .quality import LEGEND, mark_tokens, marks_text
from .tables import Column, json_records, render
from .units import format_number, format_percent, format_si

GROUP = ["kernel", "precision", "size", "ranks_per_gpu"]


def sort_rows(df: pd.DataFrame, by: list[str], mode_column: str = "mode") -> pd.DataFrame:
    """Sorts by ``by``: modes in display order (timeslice first), kernels and
    precisions in the order they first appear, everything else by value."""
    if df.empty:
        return df
    out = df.copy()
    order = []
    for column in by:
        if column == mode_column:
            out["_key_mode"] = out[column].map(mode_sort_key)
            order.append("_key_mode")
        elif column in ("kernel", "precision"):
            # first appearance: the order the suite ran them in (fp32, tf32, bf16)
            first = {v: i for i, v in reversed(list(enumerate(out[column])))}
            out[f"_key_{column}"] = out[column].map(first)
            order.append(f"_key_{column}")
        else:
            order.append(column)
    out = out.sort_values(order, kind="stable")
    return out.drop(columns=[c for c in out.columns if c.startswith("_key_")]).reset_index(drop=True)


def summarize(rs: ResultSet) -> pd.DataFrame:
    """One row per result with throughput, gain, speedup, fairness and efficiency."""
    r = rs.results
    df = pd.DataFrame({
        "kernel": r["kernel"], "precision": r["precision"], "size": r["size"],
        "ranks_per_gpu": r["ranks_per_gpu"], "mode": r["mode_label"],
        "throughput": r["throughput"], "throughput_min": r["throughput_min"],
        "throughput_max": r["throughput_max"], "unit": r["primary_unit"], "cv": r["throughput_cv"],
        "speedup": r["speedup_vs_one_rank_per_gpu"], "jain_fairness": r["jain_fairness"],
        "verified": r["verified"], "status": r["status"], "repetitions": r["repetitions"],
        "noise": r["noise"], "noise_target": r["noise_target"], "noise_limit": r["noise_limit"],
        "noisy": r["noisy"], "noise_source": r["noise_source"], "clock_source": r["clock_source"],
        "throttled_repetitions": r["throttled_repetitions"], "discarded_repetitions": r["discarded_repetitions"],
    })
    df["mark_list"] = [mark_tokens(*v) for v in zip(df["noisy"], df["noise_limit"], df["throttled_repetitions"],
                                                   df["repetitions"])]
    df["marks"] = df["mark_list"].map(marks_text)
    timeslice = df[df["mode"] == "timeslice"].set_index(GROUP)["throughput"]
    ts = [timeslice.get(tuple(k), math.nan) for k in df[GROUP].itertuples(index=False)]
    df["gain_vs_timeslice"] = df["throughput"] / pd.Series(ts, index=df.index, dtype=float)
    single = df[df["ranks_per_gpu"] == 1].groupby(["kernel", "precision", "mode"])["throughput"].max()
    best = [single.get((k, p, m), math.nan) for k, p, m in zip(df["kernel"], df["precision"], df["mode"])]
    df["best_single_rank"] = pd.Series(best, index=df.index, dtype=float)
    df["efficiency"] = df["throughput"] / df["best_single_rank"]
    return sort_rows(df, ["kernel", "precision", "size", "ranks_per_gpu", "mode"])


def gain_table(rs: ResultSet, mode: str = "mps") -> pd.DataFrame:
    """Gain of ``mode`` over timeslice per kernel, precision, size, ranks_per_gpu.

    Only configurations measured in both modes (and not failed) appear.
    ``gain_samples`` pairs the i-th repetition of each mode; the two runs
    are independent, so this is one arbitrary pairing, used only to give
    the ratio a spread for compare's verdicts.
    """
    r = rs.results
    a = r[(r["mode_label"] == mode) & r["throughput"].notna()]
    b = r[(r["mode_label"] == "timeslice") & r["throughput"].notna()]
    cols = GROUP + ["throughput", "throughput_samples", "primary_unit"]
    merged = a[cols].merge(b[cols], on=GROUP, suffixes=("_mode", "_timeslice"))
    merged["gain"] = merged["throughput_mode"] / merged["throughput_timeslice"]
    merged["gain_samples"] = [
        tuple(x / y for x, y in zip(sa, sb) if y > 0)
        for sa, sb in zip(merged["throughput_samples_mode"], merged["throughput_samples_timeslice"])
    ]
    merged = merged.rename(columns={"throughput_mode": mode, "throughput_timeslice": "timeslice",
                                    "primary_unit_mode": "unit"})
    out = merged[GROUP + [mode, "timeslice", "unit", "gain", "gain_samples"]]
    return out.sort_values(GROUP, kind="stable").reset_index(drop=True)


def _si(value: float, row: pd.Series) -> str:
    return format_si(value, row["unit"])


def _ratio(value: float, row: pd.Series) -> str:
    return format_number(value, 2)


def columns() -> list[Column]:
    """How the summary is shown (CSV gets the raw keys and values)."""
    def verified(value: bool, row: pd.Series) -> str:
        return "FAILED" if row["status"] != "ok" else ("yes" if value else "NO")

    return [
        Column("kernel", "kernel", left=True),
        Column("precision", "precision", left=True),
        Column("size", "size"),
        Column("ranks_per_gpu", "ranks/gpu"),
        Column("mode", "mode", left=True),
        Column("throughput", "throughput", _si),
        Column("cv", "cv", lambda v, r: format_percent(v)),
        Column("noise", "noise", lambda v, r: format_percent(v, 2)),
        Column("speedup", "speedup", _ratio),
        Column("gain_vs_timeslice", "vs timeslice", _ratio),
        Column("jain_fairness", "fairness", lambda v, r: format_number(v, 3)),
        Column("efficiency", "efficiency", _ratio),
        Column("verified", "verified", verified),
        Column("marks", "marks", left=True),
    ]


def csv_columns() -> list[Column]:
    """Raw columns for CSV, unit included so numbers are self-describing."""
    keys = ["kernel", "precision", "size", "ranks_per_gpu", "mode", "throughput", "throughput_min",
            "throughput_max", "unit", "cv", "speedup", "gain_vs_timeslice", "jain_fairness",
            "best_single_rank", "efficiency", "verified", "status", "repetitions", "noise", "noise_target",
            "noise_limit", "noisy", "noise_source", "clock_source", "throttled_repetitions",
            "discarded_repetitions", "marks"]
    return [Column(k, k) for k in keys]


def legend() -> str:
    """The line under a table with the noise column and marks (the report can show it too)."""
    return LEGEND


def render_summary(df: pd.DataFrame, fmt: str) -> str:
    """The summary in ``fmt``; the terminal table is blocked by kernel/precision/size.

    Table and Markdown end with the legend line; CSV has no room for one (its
    ``noisy`` and ``throttled_repetitions`` columns say it); JSON is
    ``{"legend": ..., "results": [...]}`` with ``marks`` as a list.
    """
    if fmt == "csv":
        return render(df, csv_columns(), "csv")
    if fmt == "json":
        rows = json_records(df.assign(marks=df["mark_list"]), [c.key for c in csv_columns()])
        return json.dumps({"legend": LEGEND, "results": rows}, indent=1) + "\n"
    return render(df, columns(), fmt, group_by=["kernel", "precision", "size"]) + "\n" + LEGEND + "\n"
