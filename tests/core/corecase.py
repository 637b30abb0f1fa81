"""Records made by hand for the core tests: the fields the verdicts read, nothing else."""
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "core"))

from mpsbench_core.records import Result  # noqa: E402


def kernel(mode, size, k, median, kernel="matmul", precision="fp32", status="ok", verified=True, params=None,
           percentage=None, round=None, noise=None):
    """round: the record's round (mpsbench-sweep --rounds; absent when None); noise: its noise.relative."""
    r = {"kind": "mix" if kernel == "mix" else "kernel", "kernel": kernel, "precision": precision, "size": size, "ranks_per_gpu": k,
         "params": params or {}, "mode": mode, "mps_active_thread_percentage": percentage, "status": status,
         "verified": verified, "primary_metric": "flop_per_s", "primary_unit": "FLOP/s",
         "aggregate": {"flop_per_s": {"median": median, "min": median, "max": median, "samples": [median]}}
         if status == "ok" else None, "error": None if status == "ok" else "out of memory"}
    if round is not None:
        r["round"] = round
    if noise is not None:
        r["noise"] = {"estimator": "median_se_normal", "relative": noise, "target": None, "met": None}
    return Result.from_json(r)


def rounds_of(mode, size, k, medians, **kw):
    """One kernel record per round, round r with median medians[r]."""
    return [kernel(mode, size, k, m, round=r, **kw) for r, m in enumerate(medians)]


def app(mode, k, median, name="md", status="ok", verified=True, version=3, unit="run/s", round=None):
    summary = {"median": median, "min": median, "max": median, "samples": [median]}
    if version == 3:
        r = {"kind": "app", "app": {"name": name}, "mode": mode, "ranks_per_gpu": k, "status": status,
             "verified": verified, "primary_metric": "run_per_s", "primary_unit": unit,
             "aggregate": {"run_per_s": summary} if status == "ok" else None}
        if round is not None:
            r["round"] = round
    else:
        r = {"kernel": "app", "precision": name, "size": None, "mode": mode, "ranks_per_gpu": k, "status": status,
             "verified": verified, "primary_metric": "item_per_s", "primary_unit": unit,
             "aggregate": {"item_per_s": summary} if status == "ok" else None}
    return Result.from_json(r)


def energy(joules_per_unit, joules=100.0, span=1.0, unit=None):
    """An available energy object (J per base unit of work: J/FLOP for FLOP/s)."""
    out = {"available": True, "joules": joules, "joules_per_unit": joules_per_unit, "mean_power_w": joules / span,
           "span_s": span, "uncertainty": 0.01 * joules, "method": "counter"}
    if unit is not None:
        out["work_unit"] = unit
    return out


def with_raw(result, **fields):
    """``result`` read again with ``fields`` added to its record."""
    return Result.from_json({**result.raw, **fields})


def tenant(kernel_name, k, median, alone, p99=None, alone_p99=None, precision="fp32", size=64):
    """One tenant of a mix with its throughput and, for a latency tenant, its p99 latency and alone."""
    return {"kernel": kernel_name, "precision": precision, "size": size, "params": {}, "ranks_per_gpu": k,
            "primary_metric": "flop_per_s", "primary_unit": "FLOP/s",
            "throughput": {"median": median, "min": median, "max": median, "samples": [median]},
            "latency": {"overall": {"p99": p99}} if p99 is not None else None,
            "alone_throughput": alone, "alone_latency_p99_s": alone_p99,
            "slowdown": alone / median if alone is not None else None,
            "latency_p99_ratio": p99 / alone_p99 if p99 is not None and alone_p99 else None}


def mix(mode, tenants, percentage=None, status="ok", verified=True):
    """A mix record of ``tenants`` (:func:`tenant`) in ``mode``."""
    spec = ",".join(f"{t['kernel']}/{t['precision']}/{t['size']}:{t['ranks_per_gpu']}" for t in tenants)
    r = kernel(mode, 0, sum(t["ranks_per_gpu"] for t in tenants), 1.0, kernel="mix", precision=spec, status=status,
               verified=verified, percentage=percentage)
    return with_raw(r, tenants=tenants if status == "ok" else [])
