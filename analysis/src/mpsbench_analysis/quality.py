"""How far a result can be trusted: its noise figure, its clock-throttled and its CPU-slowed repetitions.

Newer results files carry four optional objects per record (older ones lack
them; all load):

* ``noise``: ``{estimator, relative, target, met}``, the relative noise of
  the median throughput, i.e. the relative standard error of the median
  ``1.2533 * stdev / (sqrt(n) * median)`` over the primary samples, and the
  run's target for it (``settings.max_noise``, a fraction, or null);
* ``warmup``: ``{seconds, windows, stable}``;
* ``clocks``: ``{source, note, threshold, reference_sm_clock_mhz,
  affected_repetitions, discarded_repetitions, repetition_affected[],
  gpus[]}``: which repetitions ran with a throttled SM clock (NVML), and how
  many were discarded and run again;
* ``cpu``: ``{probe, threshold, reference_probe_s, slowed_repetitions,
  discarded_repetitions, repetition_slowed[], probe_ratio[], steal_s[],
  run_delay_s[], note}``: which repetitions ran while a host CPU was slowed
  (a timed thread's CPU probe more than ``1 + threshold`` times its fastest),
  the steal and run-queue time (null where unreadable), how many were
  discarded and run again.

A record without ``noise`` (or with a null ``relative``) gets the same
figure computed here from its primary samples, so every file has one.  A
result is *noisy* when its noise is above its target, or above
:data:`DEFAULT_NOISE_TARGET` (2 %) when the run set none; it is *throttled*
when some of its repetitions were throttle-affected, *CPU-slowed* when some
ran on a slowed host CPU.  Tables show them as marks (:func:`mark_tokens`),
explained by a one-line legend.

The JSON Schema of the package may not know these objects yet (files are
validated with unknown fields allowed), so :func:`check_quality` checks the
type and range of every field read here, and the cheap counts that must
agree (called from rules.py).
"""

from __future__ import annotations

import json
import math
from typing import Any

from .errors import AnalysisError
from mpsbench_core.stats import NOISE_ESTIMATOR, relative_noise

#: The noise above which a result is marked when its run set no target (a fraction).
DEFAULT_NOISE_TARGET = 0.02

#: ``noise_estimator`` of a figure computed here (the file had none): the harness's own
#: (``noise_source`` says "computed").
COMPUTED_ESTIMATOR = NOISE_ESTIMATOR

#: What the noise figure and the marks mean, one line under every table that shows them.
#: The CPU-slowed mark's part of a legend (every table that shows marks passes ``cpu_slowed`` to mark_tokens).
CPU_SLOWED_LEGEND = ("cpu-slowed:K/N = K of N repetitions ran while a host CPU was slowed (a timed thread's CPU "
                     "probe more than the record's cpu.threshold above its fastest)")
LEGEND = ("noise: relative standard error of the median, 1.2533 sd / (sqrt(n) median); marks: noise>T = noise "
          "above the target T (the run's max_noise, else 2%), throttled:K/N = K of N repetitions ran with a "
          "throttled SM clock, " + CPU_SLOWED_LEGEND)


# ---- validation -------------------------------------------------------------------------------

_TYPES = {
    "number": lambda v: isinstance(v, (int, float)) and not isinstance(v, bool),
    "integer": lambda v: isinstance(v, int) and not isinstance(v, bool),
    "boolean": lambda v: isinstance(v, bool),
    "string": lambda v: isinstance(v, str),
    "object": lambda v: isinstance(v, dict),
    "array": lambda v: isinstance(v, list),
}


def short(value: Any, limit: int = 60) -> str:
    """``value`` as JSON (a string quoted as Python does), cut to ``limit`` characters."""
    text = repr(value) if isinstance(value, str) else json.dumps(value)
    return text if len(text) <= limit else text[: limit - 3] + "..."


def _check(value: Any, kind: str, name: str, field: str, nullable: bool = False, minimum: float | None = None) -> None:
    if value is None and nullable:
        return
    if not _TYPES[kind](value):
        raise AnalysisError(f"expected {kind}{' or null' if nullable else ''}, got {short(value)}", name, field)
    if minimum is not None and value < minimum:
        raise AnalysisError(f"{short(value)} is less than the minimum of {minimum:g}", name, field)


def _fields(obj: dict[str, Any], spec: dict[str, tuple], name: str, where: str) -> None:
    """Checks the keys of ``spec`` that ``obj`` has: key -> (kind, nullable, minimum)."""
    for key, (kind, nullable, minimum) in spec.items():
        if key in obj:
            _check(obj[key], kind, name, f"{where}.{key}", nullable, minimum)


_NOISE = {"estimator": ("string", False, None), "relative": ("number", True, 0), "target": ("number", True, 0),
          "met": ("boolean", True, None)}
_WARMUP = {"seconds": ("number", True, 0), "windows": ("integer", True, 0), "stable": ("boolean", True, None)}
_CLOCKS = {"source": ("string", False, None), "note": ("string", True, None), "threshold": ("number", True, None),
           "reference_sm_clock_mhz": ("number", True, 0), "affected_repetitions": ("integer", False, 0),
           "discarded_repetitions": ("integer", False, 0), "repetition_affected": ("array", False, None),
           "gpus": ("array", False, None)}
_GPU = {"gpu_index": ("integer", False, None), "gpu_uuid": ("string", False, None),
        "sm_clock_mhz": ("array", False, None), "min_sm_clock_mhz": ("array", False, None),
        "events": ("array", False, None)}


def _check_clocks(clocks: dict[str, Any], r: dict[str, Any], name: str, where: str) -> None:
    _fields(clocks, _CLOCKS, name, where)
    affected = clocks.get("repetition_affected", [])
    for i, flag in enumerate(affected):
        _check(flag, "boolean", name, f"{where}.repetition_affected[{i}]")
    for g, gpu in enumerate(clocks.get("gpus", [])):
        at = f"{where}.gpus[{g}]"
        _check(gpu, "object", name, at)
        _fields(gpu, _GPU, name, at)
        for key in ("sm_clock_mhz", "min_sm_clock_mhz"):
            for i, mhz in enumerate(gpu.get(key, [])):
                _check(mhz, "number", name, f"{at}.{key}[{i}]", nullable=True, minimum=0)
        for i, events in enumerate(gpu.get("events", [])):
            _check(events, "array", name, f"{at}.events[{i}]")
            for j, event in enumerate(events):
                _check(event, "string", name, f"{at}.events[{i}][{j}]")
    # the counts that must agree (a failed record may have measured nothing; then the list is empty)
    repetitions = r["repetitions"]
    monitored = r["status"] == "ok" and clocks.get("source") == "nvml"
    if "repetition_affected" in clocks and (affected or monitored) and len(affected) != repetitions:
        raise AnalysisError(f"{len(affected)} {'entry' if len(affected) == 1 else 'entries'}, but repetitions is "
                            f"{repetitions}", name, f"{where}.repetition_affected")
    count = clocks.get("affected_repetitions")
    if count is not None:
        if affected and count != sum(affected):
            raise AnalysisError(f"{count}, but repetition_affected holds {sum(affected)} true", name,
                                f"{where}.affected_repetitions")
        if count > repetitions:
            raise AnalysisError(f"{count}, but repetitions is {repetitions}", name, f"{where}.affected_repetitions")


_CPU = {"probe": ("string", False, None), "threshold": ("number", False, 0),
        "reference_probe_s": ("number", True, 0), "slowed_repetitions": ("integer", False, 0),
        "discarded_repetitions": ("integer", False, 0), "repetition_slowed": ("array", False, None),
        "probe_ratio": ("array", False, None), "steal_s": ("array", True, None),
        "run_delay_s": ("array", True, None), "note": ("string", False, None)}
_CPU_LISTS = {"repetition_slowed": ("boolean", None), "probe_ratio": ("number", 0), "steal_s": ("number", 0),
              "run_delay_s": ("number", 0)}


def _entries(n: int) -> str:
    return f"{n} {'entry' if n == 1 else 'entries'}"


def _check_cpu(cpu: dict[str, Any], r: dict[str, Any], name: str, where: str) -> None:
    """The host-CPU record: one entry per repetition in each list, its count, and the rule its flags follow."""
    _fields(cpu, _CPU, name, where)
    for key, (kind, minimum) in _CPU_LISTS.items():
        for i, value in enumerate(cpu.get(key) or []):
            _check(value, kind, name, f"{where}.{key}[{i}]", minimum=minimum)
    repetitions = r["repetitions"]
    measured = r["status"] == "ok"
    for key in _CPU_LISTS:
        values = cpu.get(key)
        if values is not None and (values or measured) and len(values) != repetitions:
            raise AnalysisError(f"{_entries(len(values))}, but repetitions is {repetitions}", name, f"{where}.{key}")
    flags = cpu.get("repetition_slowed", [])
    count = cpu.get("slowed_repetitions")
    if count is not None and count != sum(flags):
        raise AnalysisError(f"{count}, but repetition_slowed holds {sum(flags)} true", name,
                            f"{where}.slowed_repetitions")
    threshold = cpu.get("threshold")
    if threshold is None:
        return
    for i, (slowed, ratio) in enumerate(zip(flags, cpu.get("probe_ratio", []))):
        if slowed != (ratio > 1 + threshold):  # the harness's rule, in the same double arithmetic
            raise AnalysisError(f"{slowed}, but probe_ratio[{i}] = {ratio!r} is {'not ' if slowed else ''}above "
                                f"1 + threshold ({1 + threshold!r})", name, f"{where}.repetition_slowed[{i}]")


def check_quality(r: dict[str, Any], name: str, where: str) -> None:
    """Types, ranges and counts of a record's optional ``noise``, ``warmup``, ``clocks`` and ``cpu``."""
    for key, spec in (("noise", _NOISE), ("warmup", _WARMUP)):
        value = r.get(key)
        if value is not None:
            _check(value, "object", name, f"{where}.{key}")
            _fields(value, spec, name, f"{where}.{key}")
    clocks = r.get("clocks")
    if clocks is not None:
        _check(clocks, "object", name, f"{where}.clocks")
        _check_clocks(clocks, r, name, f"{where}.clocks")
    cpu = r.get("cpu")
    if cpu is not None:
        _check(cpu, "object", name, f"{where}.cpu")
        _check_cpu(cpu, r, name, f"{where}.cpu")


def check_settings(context: dict[str, Any], name: str) -> None:
    """``context.settings.max_noise``, the default noise target of the run (a fraction or null)."""
    settings = context.get("settings")
    if isinstance(settings, dict) and "max_noise" in settings:
        _check(settings["max_noise"], "number", name, "context.settings.max_noise", nullable=True, minimum=0)


# ---- reading ----------------------------------------------------------------------------------

def _nan(value: Any) -> float:
    return math.nan if value is None else float(value)


def quality_fields(r: dict[str, Any], samples: tuple[float, ...], settings: dict[str, Any]) -> dict[str, Any]:
    """The row columns of one checked record (see :func:`check_quality`).

    noise: the file's ``noise.relative``, else computed from ``samples``
        (NaN for a failed result or fewer than two repetitions);
    noise_source: "file", "computed" or "" (no figure);
    noise_target: the run's target (``noise.target``, else
        ``settings.max_noise``), NaN when it set none;
    noise_limit: the target, else DEFAULT_NOISE_TARGET;
    noisy: noise > noise_limit;
    throttled_repetitions, discarded_repetitions: from ``clocks``, None when
        the file has none or did not monitor the clocks (source "none");
    cpu_slowed_repetitions, cpu_discarded_repetitions, repetition_cpu_slowed,
        max_probe_ratio: from ``cpu``, None (NaN, ()) when the file has none.
    """
    ok = r["status"] == "ok"
    noise = r.get("noise") or {}
    relative = noise.get("relative")
    if not ok:
        value, source = math.nan, ""
    elif relative is not None:
        value, source = float(relative), "file"
    else:
        value = relative_noise(samples)
        source = "computed" if math.isfinite(value) else ""
    estimator = (noise.get("estimator") or "") if source == "file" else (COMPUTED_ESTIMATOR if source else "")
    target = noise.get("target")
    if target is None:
        target = (settings or {}).get("max_noise")
    limit = DEFAULT_NOISE_TARGET if target is None else float(target)
    warmup = r.get("warmup") or {}
    clocks = r.get("clocks") or {}
    clock_source = str(clocks.get("source", ""))
    flags = tuple(bool(f) for f in clocks.get("repetition_affected", []))
    monitored = bool(clocks) and clock_source != "none"
    affected = clocks.get("affected_repetitions", sum(flags) if flags else None) if monitored else None
    discarded = clocks.get("discarded_repetitions") if monitored else None
    mins = [float(v) for gpu in clocks.get("gpus", []) for v in gpu.get("min_sm_clock_mhz", []) if v is not None]
    events = sorted({e for gpu in clocks.get("gpus", []) for rep in gpu.get("events", []) for e in rep})
    cpu = (r.get("cpu") or {}) if ok else {}
    ratios = [float(v) for v in cpu.get("probe_ratio", [])]
    return {
        "noise": value, "noise_source": source, "noise_estimator": estimator, "noise_target": _nan(target),
        "noise_limit": limit, "noise_met": noise.get("met"), "noisy": bool(math.isfinite(value) and value > limit),
        "warmup_s": _nan(warmup.get("seconds")), "warmup_windows": warmup.get("windows"),
        "warmup_stable": warmup.get("stable"),
        "clock_source": clock_source, "throttled_repetitions": affected if ok else None,
        "discarded_repetitions": discarded if ok else None, "repetition_throttled": flags,
        "reference_sm_clock_mhz": _nan(clocks.get("reference_sm_clock_mhz")),
        "min_sm_clock_mhz": min(mins) if mins else math.nan, "clock_events": ",".join(events),
        "cpu_slowed_repetitions": cpu.get("slowed_repetitions"),
        "cpu_discarded_repetitions": cpu.get("discarded_repetitions"),
        "repetition_cpu_slowed": tuple(bool(f) for f in cpu.get("repetition_slowed", [])),
        "max_probe_ratio": max(ratios) if ratios else math.nan,
    }


# ---- marks ------------------------------------------------------------------------------------

def count_value(value: Any) -> int:
    """A throttled count from a DataFrame cell (None, NaN, pd.NA or a number) as an int, 0 when unknown."""
    try:
        return 0 if value is None or value != value else int(value)
    except TypeError:  # pd.NA
        return 0


def percent_text(fraction: float) -> str:
    """0.02 -> '2%', 0.005 -> '0.5%', 0.0125 -> '1.25%'."""
    return f"{fraction * 100:.4g}%"


def mark_tokens(noisy: bool, limit: float, throttled: Any, repetitions: Any, cpu_slowed: Any = None) -> list[str]:
    """['noise>2%', 'throttled:2/5', 'cpu-slowed:1/5'], each present when it applies (LEGEND, CPU_SLOWED_LEGEND)."""
    out = []
    if bool(noisy):
        out.append(f"noise>{percent_text(limit)}")
    for token, k in (("throttled", count_value(throttled)), ("cpu-slowed", count_value(cpu_slowed))):
        if k:
            out.append(f"{token}:{k}/{count_value(repetitions)}")
    return out


def marks_text(tokens: list[str]) -> str:
    return " ".join(tokens)
