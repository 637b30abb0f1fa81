"""Reads mpsbench results files into tidy DataFrames.

One row per result in ``ResultSet.results`` and one row per rank and result
in ``ResultSet.ranks``, so that every later step is a pandas group-by rather
than a walk over nested JSON.  Files are validated against the JSON Schema
shipped inside this package (a test keeps it byte-identical to the repo's
``schema/`` file), and every problem is reported as an AnalysisError naming
the file and the field, because a user with a broken file needs to know
where to look, not a traceback (reading and validating one file: validate.py).
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Iterable

import pandas as pd

from .errors import AnalysisError
from .quality import quality_fields
from mpsbench_core.stats import coefficient_of_variation, median
from .validate import SCHEMA_NAME, SCHEMA_VERSION, SUPPORTED_VERSIONS, load_document, schema

__all__ = ["KEY", "MIX_KERNEL", "MODE_ORDER", "ResultSet", "SCHEMA_NAME", "SCHEMA_VERSION", "SUPPORTED_VERSIONS",
           "load_document", "load_results", "mode_label", "mode_sort_key", "params_text", "result_rows", "schema"]

#: What identifies one configuration; two results with the same key are the
#: same measurement (compared across files, merged within a run).  ``params``
#: is the kernel's parameters as text (:func:`params_text`, "" for none and in
#: version-1 files), so a run with other parameters is another configuration.
KEY = ["kernel", "precision", "size", "ranks_per_gpu", "mode_label", "params"]

#: The kernel name of a mix record (several kernels sharing each GPU, schema version 2).
MIX_KERNEL = "mix"

#: Display order of sharing modes; unknown ones sort after these.
MODE_ORDER = ["timeslice", "mps", "mps-qos", "mps-mem", "streams", "green", "mixed", "cpu"]

# Result fields that are flattened into named columns below; any other scalar
# field of a result (the schema may gain some) is copied through as is.
_HANDLED = {
    "kernel", "precision", "size", "ranks_per_gpu", "device", "mode", "status", "error",
    "active_ranks", "devices", "iterations_per_repetition", "repetitions", "work_per_iteration",
    "primary_metric", "primary_unit", "window_s", "aggregate", "aggregate_cv",
    "speedup_vs_one_rank_per_gpu", "jain_fairness", "verified", "max_rel_error", "ranks",
    "noise", "warmup", "clocks",  # optional, newer files: quality.py
    "params", "latency", "collective", "tenants",  # schema version 2
}

#: Counts that are None where unknown (older files), kept as integers next to them.
_OPTIONAL_COUNTS = ("throttled_repetitions", "discarded_repetitions", "warmup_windows", "latency_count",
                    "collective_bytes", "collective_checked_values", "tenant_count")

#: The figures of a latency record (``latency.overall``, ``ranks[].latency_s``) and their columns.
LATENCY_FIELDS = {"count": "latency_count", "mean": "latency_mean_s", "p50": "latency_p50_s",
                  "p95": "latency_p95_s", "p99": "latency_p99_s", "max": "latency_max_s"}


@dataclass
class ResultSet:
    """Results of one or more files.

    results: one row per result (see :func:`result_rows` for the columns).
    ranks: one row per active rank of each result, keyed like ``results``
        plus ``rank``; ``result_id`` links a rank row to its result row.
    contexts: each file's ``context`` object, by file name, in load order.
    complete: each file's top-level ``complete`` flag, by file name.
    """

    results: pd.DataFrame
    ranks: pd.DataFrame
    contexts: dict[str, dict[str, Any]] = field(default_factory=dict)
    complete: dict[str, bool] = field(default_factory=dict)

    @property
    def files(self) -> list[str]:
        return list(self.contexts)


def mode_label(result: dict[str, Any]) -> str:
    """The mode a result is grouped under.

    ``mps-qos`` runs at different active-thread percentages are different
    configurations, so the percentage (when the file has one) joins the
    label; so does the memory limit of an ``mps-mem`` run (the sweep's
    ``--mem-limits``: ``mps-mem:2G``); every other mode is its own label.
    """
    mode = str(result["mode"])
    pct = result.get("mps_active_thread_percentage")
    if mode == "mps-qos" and isinstance(pct, (int, float)) and not isinstance(pct, bool):
        return f"mps-qos:{pct:g}%"
    limit = result.get("mps_pinned_device_mem_limit")
    if mode == "mps-mem" and isinstance(limit, str) and limit:
        return f"mps-mem:{limit}"
    return mode


def _number(value: Any) -> float:
    return math.nan if value is None else float(value)


def params_text(params: dict[str, Any] | None) -> str:
    """A kernel's parameters as one compact string, names sorted: ``hidden=2048,layers=4``; "" for none."""
    if not params:
        return ""
    return ",".join(f"{name}={params[name]}" for name in sorted(params))


def _latency_columns(stats: dict[str, Any] | None) -> dict[str, Any]:
    """latency_count, latency_mean_s, latency_p50_s, ... of a latency stats object (None: NaN, count None)."""
    stats = stats or {}
    out: dict[str, Any] = {column: _number(stats.get(key)) for key, column in LATENCY_FIELDS.items()}
    out["latency_count"] = stats.get("count")
    return out


def _collective_columns(r: dict[str, Any], iteration_time: float) -> dict[str, Any]:
    """The --allreduce columns of a record: bytes, time per iteration (median over the active ranks of
    each rank's median), fraction of the iteration, check; the kernel's own time per iteration is the
    iteration time (median over the ranks) minus the collective's."""
    c = r.get("collective")
    if not c:
        return {"collective_bytes": None, "collective_time_per_iteration_s": math.nan,
                "collective_time_samples_s": (), "collective_fraction": math.nan, "collective_ok": None,
                "collective_checked_values": None, "kernel_time_per_iteration_s": math.nan}
    per_iteration = float(c["time_per_iteration_s"]["median"])
    return {"collective_bytes": c["bytes"], "collective_time_per_iteration_s": per_iteration,
            "collective_time_samples_s": tuple(float(v) for v in c["time_per_iteration_s"]["samples"]),
            "collective_fraction": float(c["fraction_of_iteration"]), "collective_ok": bool(c["ok"]),
            "collective_checked_values": c["checked_values"],
            "kernel_time_per_iteration_s": iteration_time - per_iteration}


def result_rows(doc: dict[str, Any], name: str) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """Flattens one validated document into result rows and rank rows.

    Besides the record's own fields a row has its noise figure and throttle
    counts (:func:`quality.quality_fields`: ``noise``, ``noise_limit``,
    ``noisy``, ``throttled_repetitions``, ...), computed from the samples
    where an older file has no ``noise``.

    Schema version 2 (a version-1 file gets the empty values): ``params``
    (:func:`params_text`) and ``param_values``; ``latency_count``,
    ``latency_mean_s``, ``latency_p50_s``, ``latency_p95_s``,
    ``latency_p99_s``, ``latency_max_s`` from ``latency.overall`` and
    ``latency_rank_p99_s`` (each rank's p99); ``iteration_time_s`` (median
    over the ranks of their median) and, with ``--allreduce``,
    ``collective_bytes``, ``collective_time_per_iteration_s``,
    ``collective_fraction``, ``collective_ok`` and
    ``kernel_time_per_iteration_s`` (iteration minus collective time);
    ``tenants`` (a mix's list, else None) and ``tenant_count``.  Rank rows add
    their own latency columns, ``collective_time_s``, ``kernel_time_s``,
    ``tenant`` and ``tenant_label``.
    """
    rows, rank_rows = [], []
    settings = doc["context"].get("settings") or {}
    for index, r in enumerate(doc["results"]):
        ok = r["status"] == "ok"
        # mpsbench writes a failed configuration with its measured fields null
        # or empty (nothing was measured); such rows keep NaN and empty values.
        aggregate = r["aggregate"] or {}
        primary = aggregate.get(r["primary_metric"]) or {"samples": []}
        work = r["work_per_iteration"] or {}
        samples = tuple(float(v) for v in primary["samples"])
        rank_times = [float(rr["iteration_time_s"]["median"]) for rr in r["ranks"]]
        iteration_time = median(rank_times) if rank_times else math.nan
        latency = r.get("latency")
        tenants = r.get("tenants")
        row: dict[str, Any] = {
            "file": name, "index": index,
            # size is null for kernel app (an external application has no problem size)
            "kernel": r["kernel"], "precision": r["precision"], "size": r["size"],
            "ranks_per_gpu": int(r["ranks_per_gpu"]), "mode": r["mode"], "mode_label": mode_label(r),
            "device": r["device"], "status": r["status"], "error": r["error"],
            "verified": bool(r["verified"]) and ok,
            "active_ranks": r["active_ranks"], "devices": r["devices"],
            "iterations_per_repetition": r["iterations_per_repetition"], "repetitions": r["repetitions"],
            "primary_metric": r["primary_metric"], "primary_unit": r["primary_unit"] or "",
            # A failed result has no meaningful throughput; NaN keeps it out of
            # every ratio while the row still shows up (as failed) in tables.
            "throughput": float(primary["median"]) if ok else math.nan,
            "throughput_min": float(primary["min"]) if ok else math.nan,
            "throughput_max": float(primary["max"]) if ok else math.nan,
            "throughput_samples": samples if ok else (),
            "throughput_cv": coefficient_of_variation(samples) if ok else math.nan,
            "window_s": tuple(float(v) for v in r["window_s"]),
            "aggregate_cv": _number(r["aggregate_cv"]),
            "speedup_vs_one_rank_per_gpu": _number(r["speedup_vs_one_rank_per_gpu"]),
            "jain_fairness": _number(r["jain_fairness"]),
            "max_rel_error": _number(r["max_rel_error"]),
            "work_flop": _number(work.get("flop")),
            "work_byte": _number(work.get("byte")),
            "work_items": _number(work.get("items")),
            "item_unit": work.get("item_unit", ""),
            "aggregate": aggregate,
            "mps_active_thread_percentage": _number(r.get("mps_active_thread_percentage")),
            **quality_fields(r, samples, settings),
            # schema version 2 (a version-1 file has none of these: no params, latency, collective, tenants)
            "params": params_text(r.get("params")), "param_values": dict(r.get("params") or {}),
            "iteration_time_s": iteration_time,
            **_latency_columns(latency["overall"] if latency else None),
            "latency_rank_p99_s": tuple(float(rr["latency_s"]["p99"]) for rr in r["ranks"]
                                        if rr.get("latency_s")),
            **_collective_columns(r, iteration_time),
            "tenants": list(tenants) if tenants is not None else None,
            "tenant_count": len(tenants) if tenants is not None else None,
        }
        for key, value in r.items():
            if key not in _HANDLED and key not in row and not isinstance(value, (dict, list)):
                row[key] = value
        rows.append(row)
        for rr in r["ranks"]:
            it = rr["iteration_time_s"]
            gpu = rr["gpu_iteration_time_s"]
            collective = rr.get("collective_time_s")
            tenant = rr.get("tenant")
            rank_rows.append({
                "file": name, "index": index,
                **{k: row[k] for k in ("kernel", "precision", "size", "ranks_per_gpu", "mode", "mode_label",
                                       "params")},
                "rank": rr["rank"], "host": rr["host"], "local_rank": rr["local_rank"],
                "gpu_index": rr["gpu_index"], "gpu_uuid": rr["gpu_uuid"],
                "mps_enabled": rr["mps_enabled"], "sm_count": rr["sm_count"],
                "iteration_time_s": float(it["median"]),
                "iteration_time_samples_s": tuple(float(v) for v in it["samples"]),
                "gpu_iteration_time_s": math.nan if gpu is None else float(gpu["median"]),
                "throughput_per_s": float(rr["throughput_per_s"]),
                "verified": bool(rr["verification"]["ok"]),
                "max_rel_error": _number(rr["verification"]["max_rel_error"]),
                **_latency_columns(rr.get("latency_s")),
                "collective_time_s": math.nan if not collective else float(collective["median"]),
                "kernel_time_s": math.nan if not collective else float(it["median"]) - float(collective["median"]),
                "tenant": tenant,
                "tenant_label": _tenant_label(tenants[tenant]) if tenants and tenant is not None
                and 0 <= tenant < len(tenants) else "",
            })
    return rows, rank_rows


def _tenant_label(t: dict[str, Any]) -> str:
    """``inference/fp16/64:4`` (with ``[hidden=1024]`` after the size when it has params)."""
    params = params_text(t.get("params"))
    return f"{t['kernel']}/{t['precision']}/{t['size']}" + (f"[{params}]" if params else "") + f":{t['ranks_per_gpu']}"


def _sizes_as_written(df: pd.DataFrame) -> None:
    """Integer sizes stay integers next to kernel app's null ones (pandas would make floats of all)."""
    if "size" in df and df["size"].isna().any():
        df["size"] = pd.Series([None if pd.isna(v) else int(v) for v in df["size"]], index=df.index, dtype=object)


def _check_duplicates(results: pd.DataFrame) -> None:
    dup = results[results.duplicated(KEY, keep=False)]
    if dup.empty:
        return
    first = dup.iloc[0]
    # tuples, not a column-wise ==, so that two null sizes (kernel app) count as equal
    same = dup[[tuple(k) == tuple(first[KEY]) for k in dup[KEY].itertuples(index=False)]]
    later = same.iloc[1]
    what = ", ".join(f"{k}={first[k]}" for k in KEY if k != "params" or first[k])
    raise AnalysisError(
        f"duplicate result ({what}); already in {first['file']} results[{first['index']}]",
        later["file"], f"results[{later['index']}]")


def mode_sort_key(label: str) -> tuple[int, float, str]:
    """Orders mode labels timeslice, mps, mps-qos (by percentage), mps-mem (by limit), streams, green, mixed,
    cpu, others."""
    base, _, pct = label.partition(":")
    units = {"K": 2.0**10, "M": 2.0**20, "G": 2.0**30}
    size = re.fullmatch(r"([0-9]+)([KMG])B?", pct, re.IGNORECASE)
    try:
        number = float(size.group(1)) * units[size.group(2).upper()] if size else float(pct.rstrip("%")) if pct else -1.0
    except ValueError:
        number = -1.0
    return (MODE_ORDER.index(base) if base in MODE_ORDER else len(MODE_ORDER), number, label)


def load_results(paths: Iterable[str | Path]) -> ResultSet:
    """Loads and merges results files (e.g. one per mode) into one ResultSet.

    Raises AnalysisError on the first bad file, on a file without results,
    and on a configuration that appears twice, since silently picking one of
    two measurements would make every number after it arbitrary.
    """
    rows: list[dict[str, Any]] = []
    rank_rows: list[dict[str, Any]] = []
    contexts: dict[str, dict[str, Any]] = {}
    complete: dict[str, bool] = {}
    paths = list(paths)
    if not paths:
        raise AnalysisError("no results files given")
    for path in paths:
        name = str(path)
        if name in contexts:
            raise AnalysisError("file given twice", name)
        doc = load_document(path)
        if not doc["results"]:
            raise AnalysisError("no results in the file (empty run)", name, "results")
        r, rr = result_rows(doc, name)
        rows += r
        rank_rows += rr
        contexts[name] = doc["context"]
        complete[name] = bool(doc["complete"])
    results = pd.DataFrame(rows)
    _sizes_as_written(results)
    for column in _OPTIONAL_COUNTS:  # Python ints and None: pandas would make floats of them
        results[column] = pd.Series([row[column] for row in rows], index=results.index, dtype=object)
    for column in ("tenants", "param_values", "collective_ok"):  # lists, dicts and True/False/None as they are
        results[column] = pd.Series([row[column] for row in rows], index=results.index, dtype=object)
    _check_duplicates(results)
    results["result_id"] = range(len(results))
    ranks = pd.DataFrame(rank_rows)
    _sizes_as_written(ranks)
    if len(ranks):
        for column in ("latency_count", "tenant"):
            ranks[column] = pd.Series([row[column] for row in rank_rows], index=ranks.index, dtype=object)
    ids = results.set_index(["file", "index"])["result_id"]
    ranks["result_id"] = [ids[(f, i)] for f, i in zip(ranks["file"], ranks["index"])]
    return ResultSet(results=results, ranks=ranks, contexts=contexts, complete=complete)
