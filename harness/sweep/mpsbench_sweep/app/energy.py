"""A farmed configuration's energy and SM activity: the meter's spans (meter.py) over its repetitions.

energy (whole GPUs of the configuration, every node):
  joules           summed over the kept repetitions' spans and every GPU
  span_s           the spans' lengths added up (per repetition: the mean over the nodes)
  mean_power_w     joules / span_s
  joules_per_unit  joules per unit of the primary figure's work over the same spans: the work of a
                   repetition is its figure x its span (ns/day x seconds / 86400 = ns; steps/s x s =
                   steps; run/s x s = runs); work_unit names the unit ("ns", "steps", "run")
  uncertainty      the meter's uncertainty of each span added up; method the meter's
gpu_activity: sm_active, sm_occupancy, dram_bw, tensor_active (percent), the mean over the spans
(weighted by their length), the nodes and the GPUs; per_gpu the same per GPU.
A figure that cannot be had is `available: false` with the reason (the CPU device, no meter, a GPU
without the counter), never a zero. Spans: the window (the metric and run methods: start-up
included, which lowers mean power and raises J/unit against the program's own rate), or with
--app-progress the node's common window.
"""
import math

from .meter import unavailable
from .metric import work_unit

ACTIVITY = ("sm_active", "sm_occupancy", "dram_bw", "tensor_active")


def _num(value):
    return float(value) if isinstance(value, (int, float)) and not isinstance(value, bool) \
        and math.isfinite(value) else None


def _reason(answers, part):
    """Why `part` (energy, gpu_activity) is unavailable in some answer, else None."""
    for answer in answers:
        if "unavailable" in answer:
            return answer["unavailable"]
        obj = answer.get(part)
        if not isinstance(obj, dict):
            return f"mpsbench-meter's answer has no {part}"
        if not obj.get("available"):
            return obj.get("reason") or f"{part} not available"
    return None


def _activity(answers, spans):
    """(the span-weighted means of ACTIVITY, per GPU) over the answers."""
    total = {k: 0.0 for k in ACTIVITY}
    weight = {k: 0.0 for k in ACTIVITY}
    per_gpu = {}
    for (host, answer), span in zip(answers, spans):
        for key in ACTIVITY:
            value = _num(answer["gpu_activity"].get(key))
            if value is not None:
                total[key] += value * span
                weight[key] += span
        for gpu in answer.get("gpus") or []:
            activity = gpu.get("gpu_activity") or {}
            entry = per_gpu.setdefault((host, gpu.get("uuid")), {k: [0.0, 0.0] for k in ACTIVITY})
            for key in ACTIVITY:
                value = _num(activity.get(key)) if activity.get("available", True) else None
                if value is not None:
                    entry[key][0] += value * span
                    entry[key][1] += span
    means = {k: total[k] / weight[k] if weight[k] > 0 else None for k in ACTIVITY}
    gpus = [{"host": host, "uuid": uuid, **{k: v[0] / v[1] if v[1] > 0 else None for k, v in e.items()}}
            for (host, uuid), e in per_gpu.items()]
    return means, gpus


def energy_records(device, windows, samples, unit):
    """(energy, gpu_activity) objects of a measured configuration. windows: per repetition, every node's
    window event; samples: the primary figure per repetition, in unit."""
    if device != "gpu":
        why = "the CPU device: no GPU energy counter or SM activity to read"
        return unavailable(why), unavailable(why)
    answers = [(e["host"], e.get("meter") or {"unavailable": "not metered"}) for events in windows for e in events]
    plain = [a for _, a in answers]
    energy_reason, activity_reason = _reason(plain, "energy"), _reason(plain, "gpu_activity")
    energy = unavailable(energy_reason) if energy_reason else None
    activity = unavailable(activity_reason) if activity_reason else None
    spans = [_num(a.get("span_s")) or _num((a.get("energy") or {}).get("span_s")) or 0.0 for a in plain]
    if energy is None:
        joules = sum(_num(a["energy"].get("joules")) or 0.0 for a in plain)
        rep_spans, i = [], 0
        for events in windows:
            mine = spans[i:i + len(events)]
            rep_spans.append(sum(mine) / len(mine) if mine else 0.0)
            i += len(events)
        span = sum(rep_spans)
        uncertainties = [_num(a["energy"].get("uncertainty")) for a in plain]
        per = work_unit(unit)
        work = sum(s * t for s, t in zip(samples, rep_spans)) / per[1] if per else None
        energy = {"available": True, "joules": joules, "span_s": span,
                  "mean_power_w": joules / span if span > 0 else None,
                  "joules_per_unit": joules / work if work else None, "work_unit": per[0] if per else None,
                  "uncertainty": sum(uncertainties) if all(u is not None for u in uncertainties) else None,
                  "method": plain[0]["energy"].get("method") if plain else None}
        if per is None:
            energy["per_unit_reason"] = f"the unit {unit!r} is not a rate per time unit (X/s, X/min, X/h, X/day)"
    if activity is None:
        means, per_gpu = _activity([(h, a) for h, a in answers], spans)
        activity = {"available": True, **means, "per_gpu": per_gpu}
    return energy, activity
