"""Builds small, schema-valid mpsbench results documents for the tests.

A test states what it measures (the primary throughput samples per
repetition); everything else in the record is derived consistently the way
the C++ writer does it: windows from the work done, per-rank iteration
times from the windows, fairness 1.  test_builder.py checks the output
against the schema, so a fixture can never be invalid by accident.
"""

from __future__ import annotations

import copy
import json
import math
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
        "settings": {"min_time_s": 0.5, "repetitions": 5, "seed": 1},
        "gpus": [{"host": "node1", "index": 0, "name": "NVIDIA H100 80GB HBM3", "uuid": "GPU-1234", "sm_count": 132,
                  "memory_total_bytes": 85899345920, "compute_mode": "Default", "sm_clock_peak_khz": 1980000}]
        if gpu else [],
        "ranks": [{"rank": i, "host": "node1", "local_rank": i, "device_slot": i, "gpu_index": 0 if gpu else -1,
                   "gpu_uuid": "GPU-1234" if gpu else "", "mps_enabled": False if gpu else None,
                   "sm_count": 132 if gpu else None, "memory_free_bytes": 80000000000 if gpu else None,
                   "mps_active_thread_percentage": None,
                   "context_memory_bytes": (600 << 20) if gpu and i > 0 else None}
                  for i in range(world_size)],
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
        "kernel": kernel, "precision": precision, "size": size, "ranks_per_gpu": ranks,
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
                   "verification": dict(verification), "kernel_details": {}}
                  for i in range(ranks)],
    }
    out.update(extra)
    return out


def app_result(samples: Sequence[float], mode: str = "timeslice", ranks_per_gpu: int = 1,
               name: str = "myapp") -> dict[str, Any]:
    """A kernel app record as mpsbench-sweep --app writes it (harness/sweep/mpsbench_sweep/app_results.py):
    no size and no iterations; ``samples`` are completed runs per second, 10 runs per copy and window."""
    runs = 10 * ranks_per_gpu
    windows = [runs / s for s in samples]
    zeros = _summary([0.0] * len(samples))
    per_run = [w / 10 for w in windows]
    out = result(samples, mode=mode, ranks_per_gpu=ranks_per_gpu)
    out.update({
        "kernel": "app", "precision": name, "size": None, "iterations_per_repetition": None,
        "work_per_iteration": {"flop": 0, "byte": 0, "items": 1, "item_unit": "run"},
        "primary_metric": "item_per_s", "primary_unit": "run/s", "window_s": windows,
        "aggregate": {"flop_per_s": zeros, "byte_per_s": zeros, "item_per_s": _summary(samples)},
        "speedup_vs_one_rank_per_gpu": None, "max_rel_error": None,
        "app": {"name": name, "command": ["./" + name], "command_line": "./" + name, "launcher": None,
                "check": None, "warmup": True, "runs_per_repetition": [runs] * len(samples),
                "runs_per_hour": statistics.median(samples) * 3600.0, "run_time_s": None, "failed_runs": [],
                "failed_checks": [], "gpu_memory_bytes": None},
    })
    for rank in out["ranks"]:
        rank.update(iteration_time_s=_summary(per_run), gpu_iteration_time_s=None,
                    throughput_per_s=1 / statistics.median(per_run), kernel_details={"runs": 10.0 * len(samples)},
                    verification={"ok": True, "max_rel_error": None, "tolerance": 0, "checked_values": 0,
                                  "detail": ""})
    return out


def document(results: list[dict[str, Any]], complete: bool = True, **context_args: Any) -> dict[str, Any]:
    return {"schema": "mpsbench-results", "schema_version": 1, "complete": complete,
            "context": context(**context_args), "results": copy.deepcopy(results)}


def write(path: Path, doc: dict[str, Any] | str) -> Path:
    """Writes a document (or raw text, for broken files) and returns the path."""
    path.write_text(doc if isinstance(doc, str) else json.dumps(doc, indent=1), encoding="utf-8")
    return path


def flat(value: float, n: int = 5, spread: float = 0.002) -> list[float]:
    """n samples around ``value``, +-spread relative, median exactly value (n odd)."""
    half = n // 2
    return [value * (1 + spread * (i - half) / max(half, 1)) for i in range(n)]


# ---- noise, warm-up and clocks (newer files; older ones have none of these) -------------------------

NOISE_ESTIMATOR = "median_se_normal"
REFERENCE_MHZ = 1980.0


def relative_noise(samples: Sequence[float]) -> float | None:
    """1.2533 * stdev / (sqrt(n) * median), as harness/stats.cpp writes noise.relative; None below two."""
    if len(samples) < 2 or statistics.median(samples) == 0:
        return None
    return (math.pi / 2) ** 0.5 * statistics.stdev(samples) / (len(samples) ** 0.5 * abs(statistics.median(samples)))


def with_quality(record: dict[str, Any], affected: Sequence[bool] | None = None, target: float | None = None,
                 discarded: int = 0, relative: float | None | str = "auto", source: str = "nvml",
                 events: Sequence[str] = ("sw_thermal",)) -> dict[str, Any]:
    """``record`` with the optional ``noise``, ``warmup`` and ``clocks`` of newer files, consistent with it.

    affected: per repetition, whether its SM clock was throttled (default: none);
    target: the run's max_noise; relative: the noise figure ("auto": computed from the primary samples).
    A failed record gets what mpsbench writes for one: null noise figure, null warm-up and clocks.
    """
    out = copy.deepcopy(record)
    ok = out["status"] == "ok"
    samples = out["aggregate"][out["primary_metric"]]["samples"] if ok else []
    value = (relative_noise(samples) if relative == "auto" else relative) if ok else None
    out["noise"] = {"estimator": NOISE_ESTIMATOR, "relative": value, "target": target,
                    "met": None if value is None or target is None else value <= target}
    if not ok:
        out.update(warmup=None, clocks=None)
        return out
    n = out["repetitions"]
    flags = [bool(a) for a in (affected if affected is not None else [False] * n)]
    sampled = source == "nvml"
    out["warmup"] = {"seconds": 0.31, "windows": 3, "stable": True}
    out["clocks"] = {
        "source": source, "note": "" if sampled else "NVML is not available", "threshold": 0.9,
        "reference_sm_clock_mhz": REFERENCE_MHZ if sampled else None,
        "affected_repetitions": sum(flags), "discarded_repetitions": discarded, "repetition_affected": flags,
        "gpus": [{"host": "node1", "gpu_index": 0, "gpu_uuid": "GPU-1234", "reference_sm_clock_mhz": REFERENCE_MHZ,
                  "samples": [40] * n, "sm_clock_mhz": [1500.0 if a else REFERENCE_MHZ for a in flags],
                  "min_sm_clock_mhz": [1410.0 if a else 1965.0 for a in flags],
                  "events": [list(events) if a else [] for a in flags]}] if sampled else [],
    }
    return out


def quality_settings(doc: dict[str, Any], max_noise: float | None = None, discard_throttled: bool = False) -> dict:
    """``doc`` with the settings of a newer mpsbench (adaptive repetitions, clock watching)."""
    doc["context"]["settings"].update(warmup_time_s=0.2, max_noise=max_noise,
                                      max_time_s=None if max_noise is None else 10.0,
                                      discard_throttled=discard_throttled, throttle_retries=3, clock_threshold=0.9)
    return doc
