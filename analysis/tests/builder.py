"""Builds small, schema-valid mpsbench results documents for the tests.

A test states what it measures (the primary throughput samples per
repetition); everything else in the record is derived consistently the way
the C++ writer does it: windows from the work done, per-rank iteration
times from the windows, fairness 1.  test_builder.py checks the output
against the schema, so a fixture can never be invalid by accident.

Documents are schema version 3 (a kind on every record; an application is an
``app_result``, :func:`app_result`) unless ``document(..., version=2)`` drops
the kinds the way a file written before them looks (its applications then
come from :func:`legacy_app_result`, the kernel-``app`` record of versions 1
and 2), or ``version=1`` also strips params, latency, collective and tenants.
The version-2 records of the new kernels:
:func:`latency_result` (inference: requests/s and request latency),
:func:`stream_result` (bytes/s), :func:`with_collective` (--allreduce) and
:func:`mix_result` (--mix), each derived the same way; latency percentiles
come from numpy (its default "linear" method is the harness's definition).
"""

from __future__ import annotations

import copy
import json
import statistics
from pathlib import Path
from typing import Any, Sequence

FLOP_PER_ITERATION = 2.0e9
BYTE_PER_ITERATION = 1.0e7
ITERATIONS = 10


def context(world_size: int = 4, device: str = "gpu") -> dict[str, Any]:
    gpu = device == "gpu"
    return {
        "tool": "mpsbench", "version": "0.1.0", "git_commit": "0123456789abcdef0123456789abcdef01234567",
        "git_dirty": False, "date_utc": "2026-11-21T12:00:00Z",
        "argv": ["mpsbench", "--size", "256,1024"], "hosts": ["node1"],
        "mpi": {"library_version": "Open MPI v4.1.4", "world_size": world_size},
        "mode_requested": "auto",
        "device": {"requested": device, "used": device, "note": "", "devices": 1, "max_ranks_per_device": world_size},
        "cuda": {"driver_version": "13.0" if gpu else "none", "runtime_version": "13.0", "cublas_version": 130100},
        "settings": {"min_time_s": 0.5, "repetitions": 5, "seed": 1, "allreduce_bytes": None},
        "gpus": [{"host": "node1", "index": 0, "name": "NVIDIA H100 80GB HBM3", "uuid": "GPU-1234", "sm_count": 132,
                  "memory_total_bytes": 85899345920, "compute_mode": "Default", "sm_clock_peak_khz": 1980000}]
        if gpu else [],
        "ranks": [{"rank": i, "host": "node1", "local_rank": i, "device_slot": i, "gpu_index": 0 if gpu else -1,
                   "gpu_uuid": "GPU-1234" if gpu else "", "mps_enabled": False if gpu else None,
                   "sm_count": 132 if gpu else None, "memory_free_bytes": 80000000000 if gpu else None,
                   "mps_active_thread_percentage": None,
                   "context_memory_bytes": (600 << 20) if gpu and i > 0 else None}
                  for i in range(world_size)],
        "mix": None,
    }


def _summary(samples: Sequence[float]) -> dict[str, Any]:
    return {"median": statistics.median(samples), "min": min(samples), "max": max(samples),
            "samples": list(samples)}


def result(samples: Sequence[float], kernel: str = "matmul", precision: str = "fp32", size: int = 1024,
           ranks_per_gpu: int = 1, mode: str = "timeslice", verified: bool = True, status: str = "ok",
           speedup: float | None = None, fairness: float = 1.0, **extra: Any) -> dict[str, Any]:
    """One result whose aggregate FLOP/s samples are exactly ``samples``."""
    gpu = mode != "cpu"
    ranks = ranks_per_gpu
    windows = [ITERATIONS * ranks * FLOP_PER_ITERATION / s for s in samples]
    per_iteration = [w / ITERATIONS for w in windows]
    bytes_ = [s * BYTE_PER_ITERATION / FLOP_PER_ITERATION for s in samples]
    verification = {"ok": verified, "max_rel_error": 1e-7 if verified else 0.5, "tolerance": 1e-5,
                    "checked_values": 1024, "detail": "" if verified else "mismatch"}
    out = {
        "kind": "mix" if kernel == "mix" else "kernel",
        "kernel": kernel, "precision": precision, "size": size, "ranks_per_gpu": ranks, "params": {},
        "device": "gpu" if gpu else "cpu", "mode": mode, "mps_active_thread_percentage": None, "status": status,
        "error": None if status == "ok" else "kernel launch failed",
        "active_ranks": ranks, "devices": 1, "instances_per_rank": ranks if mode == "streams" else 1,
        "iterations_per_repetition": ITERATIONS,
        "repetitions": len(samples),
        "work_per_iteration": {"flop": FLOP_PER_ITERATION, "byte": BYTE_PER_ITERATION, "items": 0.0, "item_unit": ""},
        "primary_metric": "flop_per_s", "primary_unit": "FLOP/s", "window_s": windows,
        "aggregate": {"flop_per_s": _summary(samples), "byte_per_s": _summary(bytes_),
                      "item_per_s": _summary([0.0] * len(samples))},
        "aggregate_cv": statistics.stdev(samples) / statistics.mean(samples) if len(samples) > 1 else 0.0,
        "speedup_vs_one_rank_per_gpu": speedup, "jain_fairness": fairness, "verified": verified,
        "max_rel_error": 1e-7 if verified else 0.5,
        "ranks": [{"rank": 0 if mode == "streams" else i, "instance": i if mode == "streams" else 0,
                   "host": "node1", "local_rank": i, "gpu_index": 0 if gpu else -1,
                   "gpu_uuid": "GPU-1234" if gpu else "", "mps_enabled": mode.startswith("mps") if gpu else None,
                   "sm_count": 132 if gpu else None,
                   "iteration_time_s": _summary([t * (1 + 0.01 * i) for t in per_iteration]),
                   "gpu_iteration_time_s": _summary(per_iteration) if gpu else None,
                   "throughput_per_s": statistics.median(samples) / ranks,
                   "verification": dict(verification), "kernel_details": {},
                   "latency_s": None, "collective_time_s": None, "tenant": None}
                  for i in range(ranks)],
        "latency": None, "collective": None, "tenants": None,
    }
    out.update(extra)
    return out


def app_result(samples: Sequence[float], mode: str = "timeslice", ranks_per_gpu: int = 1, name: str = "myapp",
               runs_per_copy: int = 10, check: bool = False, speedup: float | None = None) -> dict[str, Any]:
    """An application record (kind app, schema app_result) as mpsbench-sweep --app writes it on one GPU:
    ``samples`` are completed runs per second; each copy completes ``runs_per_copy`` runs in each window,
    one after another, so a run takes window / runs_per_copy.  ``check``: the runs passed an --app-check."""
    k = ranks_per_gpu
    runs = runs_per_copy * k
    windows = [runs / s for s in samples]
    per_run = [w / runs_per_copy for w in windows]
    median = statistics.median(samples)
    return {
        "kind": "app",
        "app": {"name": name, "command": ["./" + name], "command_line": "./" + name, "launcher": None,
                "check": ["./check.sh"] if check else None, "warmup": True, "runs_per_repetition": [runs] * len(samples),
                "runs_per_hour": median * 3600.0,
                "run_time_s": {"median": statistics.median(per_run), "p95": float(_percentile(per_run, 95)),
                               "min": min(per_run), "max": max(per_run)},
                "failed_runs": [], "failed_checks": [], "gpu_memory_bytes": None},
        "mode": mode, "mps_active_thread_percentage": None, "ranks_per_gpu": k, "device": "gpu", "devices": 1,
        "active_ranks": k, "repetitions": len(samples), "status": "ok", "error": None, "primary_metric": "run_per_s",
        "primary_unit": "run/s", "window_s": windows, "aggregate": {"run_per_s": _summary(samples)},
        "aggregate_cv": statistics.stdev(samples) / statistics.mean(samples) if len(samples) > 1 else 0.0,
        "speedup_vs_one_copy_per_gpu": speedup, "jain_fairness": 1.0, "verified": True,
        "copies": [{"copy": i, "host": "node1", "local_copy": i, "gpu_index": 0, "gpu_uuid": "GPU-1234",
                    "mps_enabled": mode.startswith("mps"), "sm_count": 132, "runs": runs_per_copy * len(samples),
                    "run_time_s": _summary(per_run), "throughput_per_s": 1 / statistics.median(per_run),
                    "check": {"ok": True, "checked_runs": runs_per_copy * len(samples) if check else 0,
                              "failed_runs": 0}}
                   for i in range(k)],
    }


def _percentile(values: Sequence[float], q: float) -> float:
    import numpy as np
    return float(np.percentile(np.asarray(values, dtype=float), q))


def legacy_app_result(samples: Sequence[float], mode: str = "timeslice", ranks_per_gpu: int = 1,
                      name: str = "myapp") -> dict[str, Any]:
    """An application as versions 1 and 2 recorded it, a kernel ``app`` record (harness/sweep's app_results.py
    before version 3): no size and no iterations; ``samples`` are completed runs per second, 10 runs per copy
    and window.  The same run as :func:`app_result` with its defaults."""
    runs = 10 * ranks_per_gpu
    windows = [runs / s for s in samples]
    zeros = _summary([0.0] * len(samples))
    per_run = [w / 10 for w in windows]
    out = result(samples, mode=mode, ranks_per_gpu=ranks_per_gpu)
    del out["kind"]
    out.update({
        "kernel": "app", "precision": name, "size": None, "iterations_per_repetition": None,
        "work_per_iteration": {"flop": 0, "byte": 0, "items": 1, "item_unit": "run"},
        "primary_metric": "item_per_s", "primary_unit": "run/s", "window_s": windows,
        "aggregate": {"flop_per_s": zeros, "byte_per_s": zeros, "item_per_s": _summary(samples)},
        "speedup_vs_one_rank_per_gpu": None, "max_rel_error": None,
        "app": {"name": name, "command": ["./" + name], "command_line": "./" + name, "launcher": None,
                "check": None, "warmup": True, "runs_per_repetition": [runs] * len(samples),
                "runs_per_hour": statistics.median(samples) * 3600.0,
                "run_time_s": {"median": statistics.median(per_run), "p95": float(_percentile(per_run, 95)),
                               "min": min(per_run), "max": max(per_run)},
                "failed_runs": [], "failed_checks": [], "gpu_memory_bytes": None},
    })
    for rank in out["ranks"]:
        rank.update(iteration_time_s=_summary(per_run), gpu_iteration_time_s=None,
                    throughput_per_s=1 / statistics.median(per_run), kernel_details={"runs": 10.0 * len(samples)},
                    verification={"ok": True, "max_rel_error": None, "tolerance": 0, "checked_values": 0,
                                  "detail": ""})
    return out


#: The fields schema version 2 added: in every record, in every rank of a record, in the context.
V2_RECORD_FIELDS = ("params", "latency", "collective", "tenants")
V2_RANK_FIELDS = ("latency_s", "collective_time_s", "tenant")


def as_version_2(doc: dict[str, Any]) -> dict[str, Any]:
    """``doc`` as a file written before schema version 3: no kind on its records.  Its applications must be
    :func:`legacy_app_result` records already (version 2 had no app_result)."""
    out = copy.deepcopy(doc)
    out["schema_version"] = 2
    for r in out["results"]:
        if r.get("kind") == "app":
            raise ValueError("a version-2 file has no app_result: build its applications with legacy_app_result")
        r.pop("kind", None)
    return out


def as_version_1(doc: dict[str, Any]) -> dict[str, Any]:
    """``doc`` as a file written before schema version 2: without kinds, params, latency, collective, tenants."""
    out = as_version_2(doc)
    out["schema_version"] = 1
    out["context"].pop("mix", None)
    out["context"]["settings"].pop("allreduce_bytes", None)
    for entry in out["context"].get("plan", []):
        entry.pop("params", None)
    for r in out["results"]:
        for key in V2_RECORD_FIELDS:
            r.pop(key, None)
        for rank in r["ranks"]:
            for key in V2_RANK_FIELDS:
                rank.pop(key, None)
    return out


def document(results: list[dict[str, Any]], complete: bool = True, version: int = 3,
             **context_args: Any) -> dict[str, Any]:
    doc = {"schema": "mpsbench-results", "schema_version": 3, "complete": complete,
           "context": context(**context_args), "results": copy.deepcopy(results)}
    return doc if version == 3 else {2: as_version_2, 1: as_version_1}[version](doc)


def write(path: Path, doc: dict[str, Any] | str) -> Path:
    """Writes a document (or raw text, for broken files) and returns the path."""
    path.write_text(doc if isinstance(doc, str) else json.dumps(doc, indent=1), encoding="utf-8")
    return path


def flat(value: float, n: int = 5, spread: float = 0.002) -> list[float]:
    """n samples around ``value``, +-spread relative, median exactly value (n odd)."""
    half = n // 2
    return [value * (1 + spread * (i - half) / max(half, 1)) for i in range(n)]


# ---- schema version 2: latency kernels, stream, --allreduce, --mix ---------------------------------

INFERENCE_PARAMS = {"hidden": 2048, "layers": 4}


def latency_stats(seconds: Sequence[float]) -> dict[str, Any]:
    """{count, mean, p50, p95, p99, max} as the harness writes them (numpy's linear percentiles)."""
    import numpy as np
    values = np.asarray(seconds, dtype=float)
    return {"count": len(values), "mean": float(values.mean()), "p50": float(np.percentile(values, 50)),
            "p95": float(np.percentile(values, 95)), "p99": float(np.percentile(values, 99)),
            "max": float(values.max())}


def request_latencies(p50: float, ranks: int, requests: int = 200, tail: float = 3.0) -> list[list[float]]:
    """Per rank, ``requests`` latencies around ``p50`` seconds with a tail up to ``tail`` x p50 (deterministic)."""
    out = []
    for rank in range(ranks):
        values = []
        for i in range(requests):
            u = ((i * 37 + rank * 11) % requests + 0.5) / requests  # a fixed permutation of quantiles
            values.append(p50 * (0.8 + 0.4 * u) if u < 0.9 else p50 * (1.2 + (tail - 1.2) * (u - 0.9) / 0.1))
        out.append(values)
    return out


def latency_result(samples: Sequence[float], p50: float, ranks_per_gpu: int = 1, mode: str = "timeslice",
                   kernel: str = "inference", precision: str = "fp16", size: int = 64,
                   params: dict[str, int] | None = None, tail: float = 3.0, **extra: Any) -> dict[str, Any]:
    """An inference record: ``samples`` requests/s per repetition (aggregate), request latencies
    around ``p50`` s per rank (:func:`request_latencies`), ``params`` (default INFERENCE_PARAMS)."""
    params = dict(INFERENCE_PARAMS if params is None else params)
    hidden, layers = params.get("hidden", 2048), params.get("layers", 4)
    out = result(samples, kernel=kernel, precision=precision, size=size, ranks_per_gpu=ranks_per_gpu, mode=mode,
                 **extra)
    work = {"flop": 2.0 * size * hidden * hidden * layers, "byte": 2.0 * (hidden * hidden * layers + 2 * size * hidden),
            "items": 1.0, "item_unit": "request"}
    _set_primary(out, "item_per_s", "request/s", work, samples)
    per_rank = request_latencies(p50, out["active_ranks"], tail=tail)
    for rank, values in zip(out["ranks"], per_rank):
        rank["latency_s"] = latency_stats(values)
    out["latency"] = {"source": "host_steady_clock", "unit": "s", "request": "one iteration",
                      "overall": latency_stats([v for values in per_rank for v in values])}
    out["params"] = params
    return out


def stream_result(samples: Sequence[float], precision: str = "fp64", size: int = 1 << 25, ranks_per_gpu: int = 1,
                  mode: str = "timeslice", **extra: Any) -> dict[str, Any]:
    """A stream record: ``samples`` aggregate bytes/s; triad counts 3 arrays, copy 2 (of fp64)."""
    element = 4 if precision == "fp32" else 8
    arrays = 2 if precision == "copy" else 3
    work = {"flop": 0.0 if precision == "copy" else 2.0 * size, "byte": float(arrays * size * element),
            "items": 0.0, "item_unit": ""}
    out = result(samples, kernel="stream", precision=precision, size=size, ranks_per_gpu=ranks_per_gpu, mode=mode,
                 **extra)
    _set_primary(out, "byte_per_s", "B/s", work, samples)
    return out


def _set_primary(out: dict[str, Any], metric: str, unit: str, work: dict[str, Any], samples: Sequence[float]) -> None:
    """Makes ``samples`` the aggregate of ``metric`` under ``work``; windows, other aggregates and rank times follow."""
    key = {"flop_per_s": "flop", "byte_per_s": "byte", "item_per_s": "items"}[metric]
    done = float(out["iterations_per_repetition"]) * out["active_ranks"]
    windows = [done * work[key] / s for s in samples]
    out.update(work_per_iteration=work, primary_metric=metric, primary_unit=unit, window_s=windows)
    out["aggregate"] = {m: _summary([done * work[w] / x for x in windows])
                        for m, w in (("flop_per_s", "flop"), ("byte_per_s", "byte"), ("item_per_s", "items"))}
    out["aggregate"][metric] = _summary(list(samples))
    out["aggregate_cv"] = statistics.stdev(samples) / statistics.mean(samples) if len(samples) > 1 else 0.0
    per_iteration = [w / out["iterations_per_repetition"] for w in windows]
    for i, rank in enumerate(out["ranks"]):
        rank["iteration_time_s"] = _summary([t * (1 + 0.01 * i) for t in per_iteration])
        if rank["gpu_iteration_time_s"] is not None:
            rank["gpu_iteration_time_s"] = _summary(per_iteration)
        rank["throughput_per_s"] = statistics.median(samples) / len(out["ranks"])


def with_collective(record: dict[str, Any], nbytes: int = 1 << 20, fraction: float = 0.25,
                    ok: bool = True) -> dict[str, Any]:
    """``record`` run with --allreduce ``nbytes``: each rank spends ``fraction`` of its iteration in the
    collective (per repetition), and the record's collective summarizes the ranks' medians."""
    out = copy.deepcopy(record)
    medians, iterations = [], []
    for rank in out["ranks"]:
        times = [fraction * t for t in rank["iteration_time_s"]["samples"]]
        rank["collective_time_s"] = _summary(times)
        medians.append(rank["collective_time_s"]["median"])
        iterations.append(rank["iteration_time_s"]["median"])
    per_iteration = _summary(medians)
    out["collective"] = {"operation": "MPI_Allreduce", "op": "MPI_SUM", "datatype": "MPI_DOUBLE", "bytes": nbytes,
                         "communicator": "active ranks", "time_per_iteration_s": per_iteration,
                         "fraction_of_iteration": per_iteration["median"] / statistics.median(iterations),
                         "checked_values": (nbytes // 8) * len(out["ranks"]) * out["repetitions"], "ok": ok,
                         "detail": "" if ok else "rank 1: 3 of 131072 reduced values wrong; first: [7] 6 != 8"}
    if not ok:
        out["verified"] = False
    return out


def tenant(kernel: str, precision: str, size: int, ranks_per_gpu: int, throughput: Sequence[float],
           unit: str, metric: str, params: dict[str, int] | None = None, latency: dict[str, Any] | None = None,
           alone: float | None = None, alone_p99: float | None = None) -> dict[str, Any]:
    """One entry of a mix's ``tenants``, slowdown and p99 ratio derived as the harness does."""
    summary = _summary(list(throughput))
    shared = summary["median"]
    p99 = latency["overall"]["p99"] if latency else None
    return {"kernel": kernel, "precision": precision, "size": size, "params": dict(params or {}),
            "ranks_per_gpu": ranks_per_gpu, "primary_metric": metric, "primary_unit": unit, "throughput": summary,
            "latency": latency, "alone_throughput": alone, "alone_latency_p99_s": alone_p99,
            "slowdown": alone / shared if alone is not None and shared > 0 else None,
            "latency_p99_ratio": p99 / alone_p99 if p99 is not None and alone_p99 else None}


def mix_result(tenants: list[dict[str, Any]], flop_samples: Sequence[float], mode: str = "timeslice",
               **extra: Any) -> dict[str, Any]:
    """A mix record (kernel ``mix``) of ``tenants`` (:func:`tenant`): aggregate FLOP/s ``flop_samples``,
    one rank entry per tenant rank (``tenant`` = its index), size 0, fairness 1 (as mpsbench writes)."""
    total = sum(t["ranks_per_gpu"] for t in tenants)
    spec = ",".join(f"{t['kernel']}/{t['precision']}/{t['size']}:{t['ranks_per_gpu']}" for t in tenants)
    out = result(flop_samples, kernel="mix", precision=spec, size=0, ranks_per_gpu=total, mode=mode, **extra)
    out["work_per_iteration"] = {"flop": 0.0, "byte": 0.0, "items": 0.0, "item_unit": ""}
    out["speedup_vs_one_rank_per_gpu"] = None
    out["jain_fairness"] = 1.0
    index = [i for i, t in enumerate(tenants) for _ in range(t["ranks_per_gpu"])]
    for rank, i in zip(out["ranks"], index):
        rank["tenant"] = i
        rank["throughput_per_s"] = tenants[i]["throughput"]["median"] / tenants[i]["ranks_per_gpu"]
        if tenants[i]["latency"] is not None:
            n = tenants[i]["latency"]["overall"]["count"] // tenants[i]["ranks_per_gpu"]
            p50 = tenants[i]["latency"]["overall"]["p50"]
            rank["latency_s"] = latency_stats(request_latencies(p50, 1, requests=n)[0])
    for i, t in enumerate(tenants):  # the tenant's overall count is its ranks' requests
        if t["latency"] is not None:
            members = [rank for rank, j in zip(out["ranks"], index) if j == i]
            t["latency"]["overall"]["count"] = sum(rank["latency_s"]["count"] for rank in members)
    out["tenants"] = copy.deepcopy(tenants)
    return out


def mix_sweep(modes: Sequence[str] = ("timeslice", "mps"), a: int = 2, b: int = 2) -> list[dict[str, Any]]:
    """What ``mpsbench --mix matmul/fp32/2048:a,inference/fp16/64:b`` writes per mode: matmul alone at a,
    inference alone at b, each at a+b, then the mix.  Numbers (per mode: timeslice, mps):

    matmul TFLOP/s: alone at a 20; at a+b 22 (timeslice) / 26 (mps); in the mix 12 / 16.
    inference request/s: alone at b 4000; at a+b 4400 / 6000; in the mix 1600 / 3000.
    p50 latency: inference alone 1 ms, at a+b 2 ms / 1.5 ms, in the mix 4 ms / 2 ms.
    """
    numbers = {"timeslice": {"mm": (20.0, 22.0, 12.0), "inf": (4000.0, 4400.0, 1600.0), "p50": (1e-3, 2e-3, 4e-3)},
               "mps": {"mm": (20.0, 26.0, 16.0), "inf": (4000.0, 6000.0, 3000.0), "p50": (1e-3, 1.5e-3, 2e-3)}}
    out = []
    for mode in modes:
        n = numbers.get(mode, numbers["mps"])
        mm_alone = result(flat(n["mm"][0] * 1e12), size=2048, ranks_per_gpu=a, mode=mode)
        inf_alone = latency_result(flat(n["inf"][0]), n["p50"][0], ranks_per_gpu=b, mode=mode)
        mm_total = result(flat(n["mm"][1] * 1e12), size=2048, ranks_per_gpu=a + b, mode=mode)
        inf_total = latency_result(flat(n["inf"][1]), n["p50"][1], ranks_per_gpu=a + b, mode=mode)
        inf_latency = {"source": "host_steady_clock", "unit": "s", "request": "one iteration",
                       "overall": latency_stats([v for values in request_latencies(n["p50"][2], b) for v in values])}
        tenants = [
            tenant("matmul", "fp32", 2048, a, flat(n["mm"][2] * 1e12), "FLOP/s", "flop_per_s",
                   alone=n["mm"][0] * 1e12),
            tenant("inference", "fp16", 64, b, flat(n["inf"][2]), "request/s", "item_per_s", INFERENCE_PARAMS,
                   latency=inf_latency, alone=n["inf"][0], alone_p99=inf_alone["latency"]["overall"]["p99"]),
        ]
        flops = [m + i * inf_alone["work_per_iteration"]["flop"]
                 for m, i in zip(flat(n["mm"][2] * 1e12), flat(n["inf"][2]))]
        out += [mm_alone, inf_alone, mm_total, inf_total, mix_result(tenants, flops, mode=mode)]
    return out


# the optional quality fields of newer files live in quality_builder.py; builder.with_quality etc. stay here
from quality_builder import NOISE_ESTIMATOR, REFERENCE_MHZ, quality_settings, relative_noise, with_quality  # noqa: E402,F401
