"""Schema-valid sweeps of any shape for the figure and report tests.

builder.py makes one-GPU records; a figure must also read right for a
sweep over 2 or 8 GPUs, with one size or many, any set of modes, and for
farmed applications (kind app, runs/s, no size).  This module scales
builder's records to ``devices`` GPUs the way mpsbench writes them:
``active_ranks`` = ranks per GPU x GPUs, one ``ranks`` entry per active
instance (``copies`` per copy of an application), each window the time the
whole job took, so every aggregate sample is still active_ranks x iterations
x work / window (the loader's consistency checks run on every document made
here).
"""

from __future__ import annotations

import copy
import itertools
import math
from pathlib import Path
from typing import Any, Iterable, Sequence

import builder

#: The modes a sweep can run; mps-qos runs at 100 / ranks per GPU percent, as mpsbench-sweep does.
MODES = ("timeslice", "mps", "mps-qos", "streams")


def mode_subsets() -> list[tuple[str, ...]]:
    """Every non-empty combination of MODES (15)."""
    return [c for n in range(1, len(MODES) + 1) for c in itertools.combinations(MODES, n)]


def _on_gpus(record: dict[str, Any], devices: int) -> dict[str, Any]:
    """``record`` (one GPU) run on ``devices`` GPUs with the same per-GPU throughput."""
    r = copy.deepcopy(record)
    if devices == 1:
        return r
    app = r["kind"] == "app"
    per_gpu = r["copies" if app else "ranks"]
    r["devices"] = devices
    r["active_ranks"] = len(per_gpu) * devices
    primary = r["aggregate"][r["primary_metric"]]
    for summary in r["aggregate"].values():  # aggregate rates grow with the GPUs, windows stay
        for key in ("median", "min", "max"):
            summary[key] *= devices
        summary["samples"] = [s * devices for s in summary["samples"]]
    if r["kind"] == "mix":  # its tenants' work at their own counts is not in the record: windows stay
        pass
    elif app:
        r["app"]["runs_per_repetition"] = [n * devices for n in r["app"]["runs_per_repetition"]]
        r["app"]["runs_per_hour"] = primary["median"] * 3600.0
        r["window_s"] = [n / s for n, s in zip(r["app"]["runs_per_repetition"], primary["samples"])]
    else:
        work = r["work_per_iteration"][{"flop_per_s": "flop", "byte_per_s": "byte",
                                        "item_per_s": "items"}[r["primary_metric"]]]
        done = float(r["iterations_per_repetition"]) * r["active_ranks"] * work
        r["window_s"] = [done / s for s in primary["samples"]]
        if r["primary_metric"] == "flop_per_s":  # recompute the others from the windows, as the writer does
            for key, w in (("byte_per_s", "byte"), ("item_per_s", "items")):
                total = float(r["iterations_per_repetition"]) * r["active_ranks"] * r["work_per_iteration"][w]
                samples = [total / x for x in r["window_s"]]
                r["aggregate"][key] = {"median": sorted(samples)[len(samples) // 2], "min": min(samples),
                                       "max": max(samples), "samples": samples}
    ranks = []
    for gpu in range(devices):
        for i, rank in enumerate(per_gpu):
            entry = copy.deepcopy(rank)
            n = gpu * len(per_gpu) + i
            if app:
                entry.update(copy=n, local_copy=n, gpu_index=gpu, gpu_uuid=f"GPU-{gpu:04d}", host="node1")
            else:
                entry.update(rank=gpu if r["mode"] == "streams" else n, local_rank=n, gpu_index=gpu,
                             gpu_uuid=f"GPU-{gpu:04d}", host="node1")
            ranks.append(entry)
    r["copies" if app else "ranks"] = ranks
    if app:
        return r
    # schema version 2: every GPU's ranks add their requests, collective medians and tenant work
    if r.get("latency"):
        r["latency"]["overall"]["count"] *= devices
    if r.get("collective"):
        medians = [rank["collective_time_s"]["median"] for rank in ranks]
        r["collective"]["time_per_iteration_s"] = _summary(medians)
        r["collective"]["checked_values"] *= devices
    for t in r.get("tenants") or []:
        t["throughput"] = _summary([v * devices for v in t["throughput"]["samples"]])
        if t["alone_throughput"] is not None:
            t["alone_throughput"] *= devices
        if t["latency"]:
            t["latency"]["overall"]["count"] *= devices
    return r


def _summary(samples: list[float]) -> dict[str, Any]:
    ordered = sorted(samples)
    mid = len(ordered) // 2
    med = ordered[mid] if len(ordered) % 2 else 0.5 * (ordered[mid - 1] + ordered[mid])
    return {"median": med, "min": ordered[0], "max": ordered[-1], "samples": list(samples)}


def _context(devices: int, world_size: int) -> dict[str, Any]:
    c = builder.context(world_size=world_size)
    gpu = c["gpus"][0]
    c["gpus"] = [dict(gpu, index=i, uuid=f"GPU-{i:04d}") for i in range(devices)]
    c["device"]["devices"] = devices
    c["device"]["max_ranks_per_device"] = max(1, world_size // devices)
    for i, rank in enumerate(c["ranks"]):
        rank.update(gpu_index=i % devices, gpu_uuid=f"GPU-{i % devices:04d}", device_slot=i // devices)
    return c


def _curve(mode: str, size_index: int, rpg: int) -> float:
    """A plausible throughput in FLOP/s: MPS gains most at small sizes, timeslice stays flat."""
    base = 10.0 * 2.0 ** size_index
    share = math.log2(rpg)
    strength = {"timeslice": 0.0, "mps": 0.3, "streams": 0.2, "mps-qos": 0.15}[mode]
    gain = 1.0 + strength * share / (1 + size_index)
    return base * gain * 1e12


def sweep(modes: Sequence[str] = ("timeslice", "mps", "streams"), sizes: Sequence[int] = (1024,),
          ranks: Sequence[int] = (1, 2, 4, 8), devices: int = 1, kernels: Sequence[str] = ("matmul",),
          precision: str = "fp32") -> dict[str, Any]:
    """A whole sweep as one document: every kernel x size x ranks per GPU x mode."""
    results = []
    for kernel in kernels:
        for mode in modes:
            for i, size in enumerate(sizes):
                for rpg in ranks:
                    extra = {"mps_active_thread_percentage": 100 // rpg} if mode == "mps-qos" else {}
                    value = _curve(mode, i, rpg)
                    speedup = _curve(mode, i, rpg) / _curve(mode, i, 1)
                    record = builder.result(builder.flat(value, spread=0.02), kernel=kernel, precision=precision,
                                            size=size, ranks_per_gpu=rpg, mode=mode, speedup=speedup, **extra)
                    results.append(_on_gpus(record, devices))
    doc = builder.document(results)
    doc["context"] = _context(devices, max(ranks) * devices)
    return doc


def app_sweep(modes: Sequence[str] = ("timeslice", "mps", "streams"), ranks: Sequence[int] = (1, 2, 4, 8),
              devices: int = 1, names: Iterable[str] = ("myapp",)) -> dict[str, Any]:
    """Farmed applications (kind app): runs/s, no size."""
    results = []
    for name in names:
        for mode in modes:
            for rpg in ranks:
                value = 2.0 * _curve(mode, 0, rpg) / 1e12
                record = builder.app_result(builder.flat(value, n=3, spread=0.05), mode=mode, ranks_per_gpu=rpg,
                                            name=name)
                if mode == "mps-qos":
                    record["mps_active_thread_percentage"] = 100 // rpg
                results.append(_on_gpus(record, devices))
    doc = builder.document(results)
    doc["context"] = _context(devices, max(ranks) * devices)
    return doc


def write(path: Path, doc: dict[str, Any]) -> Path:
    return builder.write(path, doc)


def _latency_curve(mode: str, size_index: int, rpg: int) -> tuple[float, float]:
    """(aggregate requests/s, p50 latency in s): throughput saturates as ranks grow, latency climbs;
    MPS overlaps requests, so it reaches more requests/s at a lower latency than time slicing."""
    base = 2000.0 / (1 + size_index)
    overlap = {"timeslice": 0.1, "mps": 0.7, "mps-qos": 0.6, "streams": 0.5}[mode]
    rate = base * (1 + overlap * (1 - 1 / rpg)) * 1.0
    p50 = rpg / rate * (1 + 0.05 * size_index)
    return rate, p50


def latency_sweep(modes: Sequence[str] = ("timeslice", "mps"), sizes: Sequence[int] = (8, 64),
                  ranks: Sequence[int] = (1, 2, 4, 8), devices: int = 1, precision: str = "fp16",
                  params: dict[str, int] | None = None) -> dict[str, Any]:
    """An inference sweep (requests/s, request latency) over modes, batch sizes and ranks per GPU."""
    results = []
    for mode in modes:
        for i, size in enumerate(sizes):
            for rpg in ranks:
                extra = {"mps_active_thread_percentage": 100 // rpg} if mode == "mps-qos" else {}
                rate, p50 = _latency_curve(mode, i, rpg)
                record = builder.latency_result(builder.flat(rate, spread=0.02), p50, ranks_per_gpu=rpg, mode=mode,
                                                precision=precision, size=size, params=params, **extra)
                results.append(_on_gpus(record, devices))
    doc = builder.document(results)
    doc["context"] = _context(devices, max(ranks) * devices)
    return doc


def mix_doc(modes: Sequence[str] = ("timeslice", "mps"), devices: int = 1, a: int = 2, b: int = 2) -> dict[str, Any]:
    """builder.mix_sweep on ``devices`` GPUs: the mix, each tenant alone and each sharing with itself."""
    doc = builder.document([_on_gpus(r, devices) for r in builder.mix_sweep(modes, a, b)])
    doc["context"] = _context(devices, (a + b) * devices)
    doc["context"]["mix"] = f"matmul/fp32/2048:{a},inference/fp16/64:{b}"
    return doc
