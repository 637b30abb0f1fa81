"""One validated document (in the version-3 shape, legacy.py) as rows: one per record, one per rank or copy.

Every kind of record gives the same columns, so that every later step is a pandas group-by rather than a
walk over nested JSON, and asks ``kind`` (never a kernel name) what a row is:

* identity: ``round`` (mpsbench-sweep --rounds; 0 in files without rounds), ``kind`` ("kernel", "mix", "app"), ``kernel`` (what ran: the kernel; an application's name;
  "mix"), ``precision`` (the kernel's; a mix's tenants as its name gives them; "" for an application),
  ``size`` (None for an application), ``ranks_per_gpu`` (copies per GPU for an application), ``mode`` and
  ``mode_label`` (core modes.label: ``mps-qos:50%``), ``params`` (core records.params_text) and
  ``param_values``;
* the primary throughput: ``throughput`` (median; NaN when the record failed), ``throughput_min``,
  ``throughput_max``, ``throughput_samples``, ``throughput_cv``, ``primary_metric``, ``primary_unit``;
* the record's figures: ``speedup_vs_one_rank_per_gpu`` (an application's over one copy per GPU),
  ``jain_fairness``, ``verified`` (and measured), ``window_s``, ``aggregate`` and its noise and throttle
  counts (quality.quality_fields);
* energy per unit of work and GPU activity of every kind (energy.py's columns: ``joules_per_unit``,
  ``energy_unit``, ``sm_active``, ...);
* an application's own: ``runs_per_hour``, ``startup_share`` (of a run spent starting up, with a program's
  own figure), ``metric_method`` ("metric", "progress"; "" for runs per second), ``bind`` (its ``params``
  are ``bind=core`` where its copies were pinned: core records.app_params);
* version 2 and on: ``latency_*`` of ``latency.overall`` and ``latency_rank_p99_s``, ``iteration_time_s``
  (median over the ranks of their median), the ``collective_*`` columns with ``--allreduce`` and
  ``kernel_time_per_iteration_s`` (iteration minus collective time), ``tenants`` and ``tenant_count`` of a
  mix.  An application has none of these: NaN, None, empty.

Rank rows: a rank of a kernel or mix record, or a copy of an application (``rank`` its copy index,
``iteration_time_s`` its run time, ``verified`` its --app-check), with the record's identity columns.
"""

from __future__ import annotations

import math
from typing import Any

from mpsbench_core import modes
from mpsbench_core.records import Result, app_params, number, params_text
from mpsbench_core.stats import coefficient_of_variation, median
from mpsbench_core.verdict import startup_share

from .energy import energy_columns
from .quality import quality_fields

#: The figures of a latency record (``latency.overall``, ``ranks[].latency_s``) and their columns.
LATENCY_FIELDS = {"count": "latency_count", "mean": "latency_mean_s", "p50": "latency_p50_s",
                  "p95": "latency_p95_s", "p99": "latency_p99_s", "max": "latency_max_s"}

# Result fields flattened into named columns below; any other scalar field of a result (the schema may
# gain some) is copied through as it is.
_HANDLED = {
    "kind", "kernel", "precision", "size", "ranks_per_gpu", "device", "mode", "status", "error",
    "active_ranks", "devices", "iterations_per_repetition", "repetitions", "work_per_iteration",
    "primary_metric", "primary_unit", "window_s", "aggregate", "aggregate_cv", "speedup_vs_one_rank_per_gpu",
    "speedup_vs_one_copy_per_gpu", "jain_fairness", "verified", "max_rel_error", "ranks", "copies", "app",
    "noise", "warmup", "clocks", "params", "latency", "collective", "tenants", "energy", "gpu_activity", "timing",
    "round", "cpu",
}
#: Identity columns a rank row repeats from its record.
RANK_IDENTITY = ("kind", "kernel", "precision", "size", "ranks_per_gpu", "mode", "mode_label", "params")


def _number(value: Any) -> float:
    return math.nan if value is None else float(value)


def _latency_columns(stats: dict[str, Any] | None) -> dict[str, Any]:
    """latency_count, latency_mean_s, latency_p50_s, ... of a latency stats object (None: NaN, count None)."""
    stats = stats or {}
    out: dict[str, Any] = {column: _number(stats.get(key)) for key, column in LATENCY_FIELDS.items()}
    out["latency_count"] = stats.get("count")
    return out


def _collective_columns(r: dict[str, Any], iteration_time: float) -> dict[str, Any]:
    """The --allreduce columns: bytes, time per iteration (median over the active ranks of each rank's median),
    fraction of the iteration, check; the kernel's own time per iteration is the iteration time minus it."""
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


def _common(r: dict[str, Any], name: str, index: int, settings: dict[str, Any]) -> dict[str, Any]:
    """The columns every kind fills the same way."""
    ok = r["status"] == "ok"
    primary = (r["aggregate"] or {}).get(r["primary_metric"]) or {"samples": []}
    samples = tuple(float(v) for v in primary["samples"])
    return {
        "file": name, "index": index, "kind": r["kind"], "ranks_per_gpu": int(r["ranks_per_gpu"]),
        "round": r.get("round", 0),
        "mode": r["mode"], "mode_label": modes.label(r), "device": r["device"], "status": r["status"],
        "error": r["error"], "verified": bool(r["verified"]) and ok, "active_ranks": r["active_ranks"],
        "devices": r["devices"], "repetitions": r["repetitions"], "primary_metric": r["primary_metric"],
        "primary_unit": r["primary_unit"] or "",
        # A failed result has no meaningful throughput; NaN keeps it out of every ratio while the row
        # still shows up (as failed) in tables.
        "throughput": float(primary["median"]) if ok else math.nan,
        "throughput_min": float(primary["min"]) if ok else math.nan,
        "throughput_max": float(primary["max"]) if ok else math.nan,
        "throughput_samples": samples if ok else (),
        "throughput_cv": coefficient_of_variation(samples) if ok else math.nan,
        "window_s": tuple(float(v) for v in r["window_s"]), "aggregate_cv": _number(r["aggregate_cv"]),
        "jain_fairness": _number(r["jain_fairness"]), "aggregate": r["aggregate"] or {},
        "mps_active_thread_percentage": _number(r.get("mps_active_thread_percentage")),
        **quality_fields(r, samples, settings), **energy_columns(r),
        "runs_per_hour": math.nan, "startup_share": math.nan, "metric_method": "", "bind": "",
    }


def _kernel_row(r: dict[str, Any], common: dict[str, Any]) -> dict[str, Any]:
    work = r["work_per_iteration"] or {}
    rank_times = [float(rr["iteration_time_s"]["median"]) for rr in r["ranks"]]
    iteration_time = median(rank_times) if rank_times else math.nan
    latency = r.get("latency")
    tenants = r.get("tenants")
    return {
        **common, "kernel": r["kernel"], "precision": r["precision"], "size": r["size"],
        "iterations_per_repetition": r["iterations_per_repetition"],
        "speedup_vs_one_rank_per_gpu": _number(r["speedup_vs_one_rank_per_gpu"]),
        "max_rel_error": _number(r["max_rel_error"]), "work_flop": _number(work.get("flop")),
        "work_byte": _number(work.get("byte")), "work_items": _number(work.get("items")),
        "item_unit": work.get("item_unit", ""),
        # version 2 (a version-1 file has none of these: no params, latency, collective, tenants)
        "params": params_text(r.get("params")), "param_values": dict(r.get("params") or {}),
        "iteration_time_s": iteration_time,
        **_latency_columns(latency["overall"] if latency else None),
        "latency_rank_p99_s": tuple(float(rr["latency_s"]["p99"]) for rr in r["ranks"] if rr.get("latency_s")),
        **_collective_columns(r, iteration_time),
        "tenants": list(tenants) if tenants is not None else None,
        "tenant_count": len(tenants) if tenants is not None else None,
    }


def _app_row(r: dict[str, Any], common: dict[str, Any]) -> dict[str, Any]:
    times = [float(c["run_time_s"]["median"]) for c in r["copies"] if c["run_time_s"] is not None]
    app = r["app"]
    metric = app.get("metric") if isinstance(app.get("metric"), dict) else {}
    method = metric.get("method", metric.get("source"))
    share = startup_share(Result.from_json(r)) if r["status"] == "ok" else None
    runs_per_hour = number(app.get("runs_per_hour"))
    return {
        **common, "kernel": app["name"], "precision": "", "size": None, "iterations_per_repetition": None,
        "speedup_vs_one_rank_per_gpu": _number(r["speedup_vs_one_copy_per_gpu"]), "max_rel_error": math.nan,
        "work_flop": math.nan, "work_byte": math.nan, "work_items": math.nan, "item_unit": "run",
        "runs_per_hour": math.nan if runs_per_hour is None else runs_per_hour,
        "startup_share": math.nan if share is None else share, "metric_method": method if isinstance(method, str) else "",
        "bind": app.get("bind") if isinstance(app.get("bind"), str) else "",
        "params": app_params(r), "param_values": {}, "iteration_time_s": median(times) if times else math.nan,
        **_latency_columns(None), "latency_rank_p99_s": (), **_collective_columns(r, math.nan),
        "tenants": None, "tenant_count": None,
    }


def _tenant_label(t: dict[str, Any]) -> str:
    """``inference/fp16/64:4`` (with ``[hidden=1024]`` after the size when it has params)."""
    params = params_text(t.get("params"))
    return f"{t['kernel']}/{t['precision']}/{t['size']}" + (f"[{params}]" if params else "") + f":{t['ranks_per_gpu']}"


def _rank_rows(r: dict[str, Any], row: dict[str, Any]) -> list[dict[str, Any]]:
    identity = {"file": row["file"], "index": row["index"], **{k: row[k] for k in RANK_IDENTITY}}
    tenants = r.get("tenants")
    out = []
    for rr in r["ranks"]:
        it, gpu, collective, tenant = rr["iteration_time_s"], rr["gpu_iteration_time_s"], rr.get("collective_time_s"), \
            rr.get("tenant")
        out.append({
            **identity, "rank": rr["rank"], "host": rr["host"], "local_rank": rr["local_rank"],
            "gpu_index": rr["gpu_index"], "gpu_uuid": rr["gpu_uuid"], "mps_enabled": rr["mps_enabled"],
            "sm_count": rr["sm_count"], "iteration_time_s": float(it["median"]),
            "iteration_time_samples_s": tuple(float(v) for v in it["samples"]),
            "gpu_iteration_time_s": math.nan if gpu is None else float(gpu["median"]),
            "throughput_per_s": float(rr["throughput_per_s"]), "verified": bool(rr["verification"]["ok"]),
            "max_rel_error": _number(rr["verification"]["max_rel_error"]), **_latency_columns(rr.get("latency_s")),
            "collective_time_s": math.nan if not collective else float(collective["median"]),
            "kernel_time_s": math.nan if not collective else float(it["median"]) - float(collective["median"]),
            "tenant": tenant,
            "tenant_label": _tenant_label(tenants[tenant]) if tenants and tenant is not None
            and 0 <= tenant < len(tenants) else "",
        })
    return out


def _copy_rows(r: dict[str, Any], row: dict[str, Any]) -> list[dict[str, Any]]:
    identity = {"file": row["file"], "index": row["index"], **{k: row[k] for k in RANK_IDENTITY}}
    out = []
    for c in r["copies"]:
        times = c["run_time_s"]
        out.append({
            **identity, "rank": c["copy"], "host": c["host"], "local_rank": c["local_copy"],
            "gpu_index": c["gpu_index"], "gpu_uuid": c["gpu_uuid"], "mps_enabled": c["mps_enabled"],
            "sm_count": c["sm_count"], "iteration_time_s": math.nan if times is None else float(times["median"]),
            "iteration_time_samples_s": () if times is None else tuple(float(v) for v in times["samples"]),
            "gpu_iteration_time_s": math.nan, "throughput_per_s": float(c["throughput_per_s"]),
            "verified": bool(c["check"]["ok"]), "max_rel_error": math.nan, **_latency_columns(None),
            "collective_time_s": math.nan, "kernel_time_s": math.nan, "tenant": None, "tenant_label": "",
        })
    return out


def result_rows(doc: dict[str, Any], name: str) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """Result rows and rank rows of one validated document in the version-3 shape (module doc)."""
    rows, rank_rows = [], []
    settings = doc["context"].get("settings") or {}
    for index, r in enumerate(doc["results"]):
        common = _common(r, name, index, settings)
        if r["kind"] == "app":
            row = _app_row(r, common)
            rank_rows += _copy_rows(r, row)
        else:
            row = _kernel_row(r, common)
            rank_rows += _rank_rows(r, row)
        for key, value in r.items():
            if key not in _HANDLED and key not in row and not isinstance(value, (dict, list)):
                row[key] = value
        rows.append(row)
    return rows, rank_rows
