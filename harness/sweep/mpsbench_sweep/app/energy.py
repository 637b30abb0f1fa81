"""A farmed configuration's energy and SM activity: the meter's spans (meter.py) over its repetitions.

energy (whole GPUs of the configuration, every node; the definitions are mpsbench_core.app_energy's, which the
analysis checks against):
  joules           summed over the kept repetitions' spans and every GPU
  span_s           the spans' lengths added up (per repetition: the mean over the nodes)
  mean_power_w     joules / span_s
  joules_per_unit  joules per unit of work done in those spans: without a figure of the program's own, J per
                   counted run (each span is a whole window, holding its runs whole); with --app-progress, J
                   per unit of the counters' increase over each node's span; with --app-metric null, with the
                   reason in per_unit_reason (the span of the program's rate is unknown)
  work, work_unit  the units joules_per_unit is over and their name, singular ("run", "step", "ns")
  joules_per_run   J per counted run where the spans hold whole runs (runs, --app-metric); null with
                   --app-progress, whose spans are the common stretches
  uncertainty      the meter's uncertainty of each span added up; method the meter's
gpu_activity: sm_active, sm_occupancy, dram_bw, tensor_active (percent), the mean over the spans
(weighted by their length), the nodes and the GPUs; per_gpu the same per GPU.
A figure that cannot be had is `available: false` (or a null with its reason), never a zero or a guess.
How the program's figure was read shows in the runs the farmers reported: counter lines (progress) on every
run with --app-progress, a rate (metric) on every counted run with --app-metric.
"""
import math

from mpsbench_core.app_energy import METRIC_REASON, counter_work, no_span, per_unit, span_end, span_problem
from mpsbench_core.energy import rate_unit

from .figures import counted
from .meter import unavailable

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


def _method(windows):
    """progress, metric or runs: how the runs the farmers reported were read (module doc)."""
    runs = [r for events in windows for e in events for r in e["runs"]]
    if any(r.get("progress") is not None for r in runs):
        return "progress"
    return "metric" if any(r.get("metric") is not None for r in runs) else "runs"


def _counter_work(windows, answers):
    """(the units the copies' counters went up by over their node's metered spans, None), or (None, why not).
    A node's span runs from its last copy's first counter line to the earliest of its copies' last counter lines
    up to its first run's end (core app_energy.span_end; progress.py tells the meter so)."""
    work, i = 0.0, 0
    for events in windows:
        for event in events:
            answer = answers[i]
            i += 1
            lines = [(r, r["progress"]["samples"]) for r in event["runs"] if (r.get("progress") or {}).get("samples")]
            if not lines or len(lines) != len(event["runs"]):
                return None, f"{event['host']}: a copy printed no counter line"
            start = max(samples[0][0] for _, samples in lines)
            stop = span_end([samples for _, samples in lines], min(r["start_s"] + r["duration_s"] for r, _ in lines))
            problem = no_span(start, stop) or span_problem(answer.get("span_s"), start, stop)
            if problem:
                return None, problem
            work += sum(counter_work(samples, start, stop) for _, samples in lines)
    return work, None


def _per_unit(method, windows, answers, joules, unit):
    """The per-unit fields of an available energy (module doc)."""
    rate = rate_unit(unit)
    runs = sum(counted(r) for events in windows for e in events for r in e["runs"])
    if method == "runs":
        out = {"joules_per_unit": per_unit(joules, runs), "work": runs, "work_unit": "run",
               "joules_per_run": per_unit(joules, runs)}
        return out if runs else dict(out, per_unit_reason="no run was counted in the metered windows")
    out = {"joules_per_unit": None, "work": None, "work_unit": rate[0] if rate else None,
           "joules_per_run": per_unit(joules, runs) if method == "metric" else None}
    if method == "metric":
        return dict(out, per_unit_reason=METRIC_REASON)
    if rate is None:
        return dict(out, per_unit_reason=f"the unit {unit!r} is not a rate per time unit (X/s, X/min, X/h, X/day)")
    work, why = _counter_work(windows, answers)
    out.update(work=work, joules_per_unit=per_unit(joules, work))
    if out["joules_per_unit"] is None:
        out["per_unit_reason"] = why or "no unit was counted in the metered spans"
    return out


def energy_records(device, windows, unit):
    """(energy, gpu_activity) objects of a measured configuration. windows: per repetition, every node's
    window event; unit: the primary figure's (the work is counted from the runs and counters, not taken from
    the primary figure: module doc)."""
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
        energy = {"available": True, "joules": joules, "span_s": span,
                  "mean_power_w": joules / span if span > 0 else None,
                  **_per_unit(_method(windows), windows, plain, joules, unit),
                  "uncertainty": sum(uncertainties) if all(u is not None for u in uncertainties) else None,
                  "method": plain[0]["energy"].get("method") if plain else None}
    if activity is None:
        means, per_gpu = _activity([(h, a) for h, a in answers], spans)
        activity = {"available": True, **means, "per_gpu": per_gpu}
    return energy, activity
