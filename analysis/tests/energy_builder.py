"""What newer writers add to builder.py's records, consistent with them: ``energy`` and ``gpu_activity`` (issue 27)
and an application measured in its own unit (issue 26: ``metric_per_s``, ``app.metric``, per-copy figures).

Energy is given as joules per base unit of work (J/FLOP for FLOP/s); the builder derives the joules from the
work of the kept repetitions (Σ samples[i] x window_s[i]; an application's at its rates over the span) and
the mean power from a span, so every figure agrees the way the checks require.
"""

from __future__ import annotations

import copy
import math
import statistics
from typing import Any, Sequence

from mpsbench_analysis import validate
from mpsbench_core.energy import rate_unit
from mpsbench_core.stats import jain_fairness

TFLOP = 1e12


def _work(r: dict[str, Any], span: float) -> float:
    samples = r["aggregate"][r["primary_metric"]]["samples"]
    if r["kind"] == "app":
        rate = rate_unit(r["primary_unit"])
        return statistics.median(samples) * span / (rate[1] if rate else 1.0)
    return math.fsum(s * w for s, w in zip(samples, r["window_s"]))


def with_energy(record: dict[str, Any], per_unit: float, span: float | None = None, unit: str | None = None,
                uncertainty: float = 0.02) -> dict[str, Any]:
    """``record`` with an available energy of ``per_unit`` joules per base unit of work; span: the metered
    seconds (default: the windows added up); unit: the work_unit written, if any."""
    out = copy.deepcopy(record)
    span = math.fsum(out["window_s"]) if span is None else span
    joules = per_unit * _work(out, span)
    out["energy"] = {"available": True, "joules": joules, "joules_per_unit": per_unit, "mean_power_w": joules / span,
                     "span_s": span, "uncertainty": uncertainty * joules, "method": "nvml total energy counter"}
    if unit is not None:
        out["energy"]["work_unit"] = unit
    return out


def without_energy(record: dict[str, Any], reason: str = "the CPU device: no GPU energy counter") -> dict[str, Any]:
    out = copy.deepcopy(record)
    out["energy"] = {"available": False, "reason": reason}
    out["gpu_activity"] = {"available": False, "reason": reason}
    return out


def with_activity(record: dict[str, Any], sm_active: float, sm_occupancy: float = 30.0, dram_bw: float = 20.0,
                  tensor_active: float = 0.0, gpus: int = 1) -> dict[str, Any]:
    """``record`` with GPU activity; with several GPUs, per-GPU figures around the whole's (their mean)."""
    out = copy.deepcopy(record)
    figures = {"sm_active": sm_active, "sm_occupancy": sm_occupancy, "dram_bw": dram_bw,
               "tensor_active": tensor_active}
    per_gpu = []
    for g in range(gpus):
        shift = (g - (gpus - 1) / 2) if gpus > 1 else 0.0
        per_gpu.append({"available": True, "host": "node1", "uuid": f"GPU-{g}", **{k: min(100.0, max(0.0, v + shift))
                                                                   for k, v in figures.items()}})
    out["gpu_activity"] = {"available": True, **figures, "per_gpu": per_gpu}
    return out


def own_figure(record: dict[str, Any], per_copy: Sequence[Sequence[float]], unit: str = "ns/day",
               method: str = "progress", startup: Sequence[Sequence[float]] | None = None,
               runs_per_hour: float | None = None) -> dict[str, Any]:
    """An application record (builder.app_result) measured in its own unit: ``per_copy[c][i]`` is copy c's
    figure in repetition i; the primary figure is their sum per repetition; ``startup`` per copy and
    repetition in seconds (progress), with the share of a run it takes."""
    out = copy.deepcopy(record)
    totals = [math.fsum(rates[i] for rates in per_copy) for i in range(len(per_copy[0]))]
    summary = lambda v: {"median": statistics.median(v), "min": min(v), "max": max(v), "samples": list(v)}  # noqa
    medians = [statistics.median(rates) for rates in per_copy]
    out["primary_metric"], out["primary_unit"] = "metric_per_s", unit
    out["aggregate"]["metric_per_s"] = summary(totals)
    out["aggregate_cv"] = statistics.stdev(totals) / statistics.mean(totals) if len(totals) > 1 else 0.0
    out["jain_fairness"] = jain_fairness(medians)
    out["speedup_vs_one_copy_per_gpu"] = None
    app = out["app"]
    app["metric"] = {"method": method, "regex": r"([0-9.]+) ns/day", "unit": unit,
                     "copy_spread": (max(medians) - min(medians)) / statistics.mean(medians),
                     "jain_fairness": jain_fairness(medians), "common_window_s": None, "rated_runs": None,
                     "unrated_runs": None}
    if runs_per_hour is not None:
        app["runs_per_hour"] = runs_per_hour
    run_time = statistics.median(c["run_time_s"]["median"] for c in out["copies"])
    shares = []
    for j, c in enumerate(out["copies"]):
        c["metric_per_s"] = summary(per_copy[j])
        c["startup_s"] = summary(startup[j]) if startup else None
        if startup:
            shares += [s / run_time for s in startup[j]]
    app["startup_share"] = statistics.mean(shares) if shares else None
    return out


def sweep_schema() -> dict[str, Any]:
    """The package's schema with what the sweep's schema adds for a program's own figure (the enum value
    metric_per_s and its aggregate), where it does not have them yet: the same file once they are merged."""
    base = copy.deepcopy(validate.schema.__wrapped__(3))
    app = base["definitions"]["app_result"]["properties"]
    if "metric_per_s" not in app["primary_metric"]["enum"]:
        app["primary_metric"]["enum"].append("metric_per_s")
        app["aggregate"].setdefault("properties", {})["metric_per_s"] = {"$ref": "#/definitions/summary"}
    return base
