"""Records made by hand for the core tests: the fields the verdicts read, nothing else."""
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "core"))

from mpsbench_core.records import Result  # noqa: E402


def kernel(mode, size, k, median, kernel="matmul", precision="fp32", status="ok", verified=True, params=None,
           percentage=None):
    r = {"kind": "mix" if kernel == "mix" else "kernel", "kernel": kernel, "precision": precision, "size": size, "ranks_per_gpu": k,
         "params": params or {}, "mode": mode, "mps_active_thread_percentage": percentage, "status": status,
         "verified": verified, "primary_metric": "flop_per_s", "primary_unit": "FLOP/s",
         "aggregate": {"flop_per_s": {"median": median, "min": median, "max": median, "samples": [median]}}
         if status == "ok" else None, "error": None if status == "ok" else "out of memory"}
    return Result.from_json(r)


def app(mode, k, median, name="md", status="ok", verified=True, version=3, unit="run/s"):
    summary = {"median": median, "min": median, "max": median, "samples": [median]}
    if version == 3:
        r = {"kind": "app", "app": {"name": name}, "mode": mode, "ranks_per_gpu": k, "status": status,
             "verified": verified, "primary_metric": "run_per_s", "primary_unit": unit,
             "aggregate": {"run_per_s": summary} if status == "ok" else None}
    else:
        r = {"kernel": "app", "precision": name, "size": None, "mode": mode, "ranks_per_gpu": k, "status": status,
             "verified": verified, "primary_metric": "item_per_s", "primary_unit": unit,
             "aggregate": {"item_per_s": summary} if status == "ok" else None}
    return Result.from_json(r)
