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

Applications (kind ``app``) are rows like kernels': their name in the kernel column (headed
"kernel/app", or "app" when there is nothing else), no precision or size, copies per GPU as the ranks
per GPU, runs per second as the throughput and the speedup over one copy per GPU.  One measured in its
own unit (``metric_per_s``: ns/day, it/s) shows that figure without SI prefixes, and its runs per hour
and the share of a run spent starting up beside it; its binding (``bind=core``) is its params.

Energy and GPU activity (energy.py), where some row has them: energy per unit of work of the primary
figure (J/TFLOP, J/GB, J/request, J/run, J per program unit) and the SM activity in percent (NVML GPM).

Schema version 2 adds columns that appear in the table only when some row
has them (CSV and JSON always have them): ``params`` (the kernel's
parameters, ``hidden=2048,layers=4``), the request latency of latency
kernels (``latency.overall`` p50, p95 and p99: per mode and ranks per GPU,
as every row), and with ``--allreduce`` the time per iteration of the kernel
itself next to the collective's and its share of the iteration.  A mix
(kind ``mix``) is one row with the aggregate of all its tenants and no gain
over timeslice (an aggregate gain hides a starved tenant: plain MPS may add
FLOP/s while it slows the latency tenant 200x); how much each tenant slowed
down is a table of its own under the summary (slowdown.py), and its verdict
speaks per tenant (core mix.py).
"""

from __future__ import annotations

import json
import math
from typing import Any

import pandas as pd

from mpsbench_core.modes import sort_key as mode_sort_key

from .energy import COLUMNS as ENERGY_COLUMNS, has_activity, has_energy, per_unit_text, percent_text, unavailable_note
from .loader import ResultSet
from .quality import LEGEND, mark_tokens, marks_text
from .slowdown import LEGEND as SLOWDOWN_LEGEND, slowdown_table, table_columns as slowdown_columns
from .tables import Column, format_figure, json_records, render
from mpsbench_core.units import format_count, format_number, format_percent, format_seconds

#: A configuration apart from its mode (params last: "" for kernels without and in version-1 files).
GROUP = ["kind", "kernel", "precision", "size", "ranks_per_gpu", "params"]


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
        elif column in ("kind", "kernel", "precision", "params"):
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
        "kind": r["kind"], "kernel": r["kernel"], "precision": r["precision"], "size": r["size"],
        "ranks_per_gpu": r["ranks_per_gpu"], "mode": r["mode_label"],
        "throughput": r["throughput"], "throughput_min": r["throughput_min"],
        "throughput_max": r["throughput_max"], "unit": r["primary_unit"], "cv": r["throughput_cv"],
        "speedup": r["speedup_vs_one_rank_per_gpu"], "jain_fairness": r["jain_fairness"],
        "verified": r["verified"], "status": r["status"], "repetitions": r["repetitions"],
        "noise": r["noise"], "noise_target": r["noise_target"], "noise_limit": r["noise_limit"],
        "noisy": r["noisy"], "noise_source": r["noise_source"], "clock_source": r["clock_source"],
        "throttled_repetitions": r["throttled_repetitions"],
        "cpu_slowed_repetitions": r["cpu_slowed_repetitions"], "discarded_repetitions": r["discarded_repetitions"],
        "params": r["params"],
        "latency_p50_s": r["latency_p50_s"], "latency_p95_s": r["latency_p95_s"],
        "latency_p99_s": r["latency_p99_s"], "latency_count": r["latency_count"],
        "iteration_time_s": r["iteration_time_s"], "kernel_time_per_iteration_s": r["kernel_time_per_iteration_s"],
        "collective_time_per_iteration_s": r["collective_time_per_iteration_s"],
        "collective_fraction": r["collective_fraction"], "collective_bytes": r["collective_bytes"],
        "runs_per_hour": r["runs_per_hour"], "startup_share": r["startup_share"], "metric_method": r["metric_method"],
        **{c: r[c] for c in ENERGY_COLUMNS},
    })
    # ranks of different tenants do different work: a mix's Jain index (written as 1) says nothing
    df.loc[df["kind"] == "mix", "jain_fairness"] = math.nan
    df["mark_list"] = [mark_tokens(*v) for v in zip(df["noisy"], df["noise_limit"], df["throttled_repetitions"],
                                                   df["repetitions"], df["cpu_slowed_repetitions"])]
    df["marks"] = df["mark_list"].map(marks_text)
    timeslice = df[df["mode"] == "timeslice"].set_index(GROUP)["throughput"]
    ts = [timeslice.get(tuple(k), math.nan) for k in df[GROUP].itertuples(index=False)]
    df["gain_vs_timeslice"] = df["throughput"] / pd.Series(ts, index=df.index, dtype=float)
    # a mix's aggregate against timeslice hides a starved tenant: its verdict and slowdown table speak per tenant
    df.loc[df["kind"] == "mix", "gain_vs_timeslice"] = math.nan
    single = df[df["ranks_per_gpu"] == 1].groupby(["kind", "kernel", "precision", "params", "mode"])["throughput"].max()
    best = [single.get((c, k, p, q, m), math.nan)
            for c, k, p, q, m in zip(df["kind"], df["kernel"], df["precision"], df["params"], df["mode"])]
    df["best_single_rank"] = pd.Series(best, index=df.index, dtype=float)
    df["efficiency"] = df["throughput"] / df["best_single_rank"]
    return sort_rows(df, ["kind", "kernel", "precision", "params", "size", "ranks_per_gpu", "mode"])


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
    """SI prefixes for the kernels' units and runs/s; a program's own unit as it is (5,882 ns/day)."""
    return format_figure(value, row["unit"], row["kind"])


def _ratio(value: float, row: pd.Series) -> str:
    return format_number(value, 2)


def _size(value: Any, row: pd.Series) -> str:
    """A mix has no size (its tenants have theirs, in its name): '-', not the 0 mpsbench writes."""
    if row.get("kind") == "mix" or value is None or (isinstance(value, float) and math.isnan(value)):
        return "-"
    return str(value)


def _seconds(value: float, row: pd.Series) -> str:
    return format_seconds(value)


def _has(df: pd.DataFrame | None, column: str) -> bool:
    """Whether some row of ``df`` has a value in ``column``: a non-empty string, or a number."""
    if df is None or column not in df:
        return False
    return any((v != "") if isinstance(v, str) else pd.notna(v) for v in df[column])


def _only_apps(df: pd.DataFrame | None) -> bool:
    return df is not None and "kind" in df and len(df) > 0 and bool((df["kind"] == "app").all())


def subject_header(df: pd.DataFrame | None) -> str:
    """What the first column names: kernels, applications (their ranks per GPU are copies), or both."""
    kinds = set(df["kind"]) if df is not None and "kind" in df else set()
    if kinds == {"app"}:
        return "app"
    return "kernel/app" if "app" in kinds else "kernel"


def columns(df: pd.DataFrame | None = None) -> list[Column]:
    """How the summary is shown (CSV gets the raw keys and values).

    With the summary ``df``: a params column when a kernel has parameters, the latency p50/p95/p99
    of latency kernels, and the kernel's and the collective's time per iteration with --allreduce,
    each only when some row has it."""
    def verified(value: bool, row: pd.Series) -> str:
        return "FAILED" if row["status"] != "ok" else ("yes" if value else "NO")

    params = [Column("params", "params", left=True)] if _has(df, "params") else []
    latency = ([Column(f"latency_{p}_s", f"{p} latency", _seconds) for p in ("p50", "p95", "p99")]
               if _has(df, "latency_p99_s") else [])
    own = _has(df, "startup_share") or (df is not None and "metric_method" in df and bool((df["metric_method"] != "").any()))
    app_figures = ([Column("runs_per_hour", "runs/hour", lambda v, r: format_count(v, "").strip()),
                    Column("startup_share", "start-up", lambda v, r: format_percent(v))] if own else [])
    energy = [Column("joules_per_unit", "energy/unit", per_unit_text)] if has_energy(df) else []
    energy += [Column("sm_active", "SM active", percent_text)] if has_activity(df) else []
    collective = ([Column("kernel_time_per_iteration_s", "kernel time", _seconds),
                   Column("collective_time_per_iteration_s", "allreduce", _seconds),
                   Column("collective_fraction", "allreduce share", lambda v, r: format_percent(v))]
                  if _has(df, "collective_time_per_iteration_s") else [])
    return [
        Column("kernel", subject_header(df), left=True),
        Column("precision", "precision", lambda v, r: v or "-", left=True),
        *params,
        Column("size", "size", _size),
        Column("ranks_per_gpu", "copies/gpu" if _only_apps(df) else "ranks/gpu"),
        Column("mode", "mode", left=True),
        Column("throughput", "throughput", _si),
        *app_figures,
        *latency,
        *collective,
        *energy,
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
    keys = ["kind", "kernel", "precision", "size", "ranks_per_gpu", "mode", "throughput", "throughput_min",
            "throughput_max", "unit", "cv", "speedup", "gain_vs_timeslice", "jain_fairness",
            "best_single_rank", "efficiency", "verified", "status", "repetitions", "noise", "noise_target",
            "noise_limit", "noisy", "noise_source", "clock_source", "throttled_repetitions",
            "discarded_repetitions", "marks", "params", "latency_p50_s", "latency_p95_s", "latency_p99_s",
            "latency_count", "iteration_time_s", "kernel_time_per_iteration_s", "collective_time_per_iteration_s",
            "collective_fraction", "collective_bytes", "runs_per_hour", "startup_share", "metric_method",
            *ENERGY_COLUMNS]
    return [Column(k, k) for k in keys]


def legend() -> str:
    """The line under a table with the noise column and marks (the report can show it too)."""
    return LEGEND


def render_summary(df: pd.DataFrame, fmt: str, slowdown: pd.DataFrame | None = None) -> str:
    """The summary in ``fmt``; the terminal table is blocked by kernel/precision/size.

    Table and Markdown end with the legend line; CSV has no room for one (its
    ``noisy`` and ``throttled_repetitions`` columns say it); JSON is
    ``{"legend": ..., "results": [...]}`` with ``marks`` as a list.
    ``slowdown``: the slowdown table of mixed tenants (slowdown.py); when it
    has rows, table and Markdown add it under the summary with its own
    legend, JSON as ``"slowdown"`` (CSV keeps the one table: use JSON).
    """
    extra = slowdown is not None and not slowdown.empty
    if fmt == "csv":
        return render(df, csv_columns(), "csv")
    if fmt == "json":
        rows = json_records(df.assign(marks=df["mark_list"]), [c.key for c in csv_columns()])
        out = {"legend": LEGEND, "results": rows}
        if extra:
            from .slowdown import TABLE_COLUMNS
            out.update(slowdown_legend=SLOWDOWN_LEGEND, slowdown=json_records(slowdown, TABLE_COLUMNS))
        return json.dumps(out, indent=1) + "\n"
    text = render(df, columns(df), fmt, group_by=["kind", "kernel", "precision", "params", "size"]) + "\n" + LEGEND + "\n"
    note = unavailable_note(df)
    text += note + "\n" if note else ""
    if extra:
        title = "Slowdown of mixed tenants"
        head = f"\n### {title}\n\n" if fmt == "markdown" else f"\n{title.lower()}:\n"
        text += head + render(slowdown, slowdown_columns(), fmt) + "\n" + SLOWDOWN_LEGEND + "\n"
    return text


def summary_text(rs: ResultSet, fmt: str) -> str:
    """What ``mpsbench-analyze summary`` prints: the summary, and the slowdown of mixed tenants when
    the files hold a mix."""
    return render_summary(summarize(rs), fmt, slowdown_table(rs))
