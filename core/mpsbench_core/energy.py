"""What a configuration cost in energy, and how busy it kept the GPU: a record's ``energy`` and ``gpu_activity``.

Every record (kernel, mix, application) of a newer file may carry (schema result and app_result; files of
older writers have neither, and read as "not measured"):

  energy        {available, joules, joules_per_unit, work_unit?, work?, joules_per_run?, mean_power_w, span_s,
                 uncertainty, method, reason?, per_unit_reason?}
                joules over the kept repetitions and every GPU of the configuration; joules_per_unit in
                joules per base unit of the primary figure's work: J/FLOP (flop_per_s), J/B (byte_per_s), J
                per item (item_per_s: a request), J per run (run_per_s), J per unit of a program's own
                figure (metric_per_s in X per a time unit does X of work: ns/day -> J/ns, steps/s -> J/step;
                one unit of work is named in the singular, units.singular); mean_power_w = joules / span_s.
                An application's (app_energy.py): work, the units joules_per_unit is over; joules_per_run,
                J per counted run. With --app-metric only J per run can be had (the span of the program's
                rate is unknown): its energy per unit of work is read as J per run, never as a J/unit
  gpu_activity  {available, sm_active, sm_occupancy, dram_bw, tensor_active, per_gpu[], reason?}, percent
                (NVML GPM), the mean over the kept repetitions and the GPUs

``available: false`` comes with a reason and no figures: a figure that could not be had is never a zero.
The readers here are lenient (any JSON value gives an answer, never an exception): a figure that is not a
positive finite number reads as missing, and an energy without one is not available.  The analysis refuses
files whose figures contradict each other before they get here (mpsbench_analysis.energy_rules and
mpsbench_analysis.derived).

People read energy per unit of work scaled like the throughput they know: J/TFLOP, J/GB, J/request,
J/run, J/ns (:func:`per_unit_label`, :func:`format_per_unit`).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Mapping

from .app_energy import METRIC_REASON
from .records import number
from .units import format_count, singular

#: The activity figures of gpu_activity, in percent, in the order tables show them.
ACTIVITY_FIELDS = ("sm_active", "sm_occupancy", "dram_bw", "tensor_active")
#: Seconds per time unit of a rate unit's denominator ("ns/day": a day).
PER_SECONDS = {"s": 1.0, "sec": 1.0, "second": 1.0, "min": 60.0, "minute": 60.0, "h": 3600.0, "hr": 3600.0,
               "hour": 3600.0, "day": 86400.0, "d": 86400.0}
#: Work units shown scaled: FLOP as TFLOP, bytes as GB.
_SCALED = {"FLOP": (1e12, "TFLOP"), "B": (1e9, "GB")}
_METRIC_WORK = {"flop_per_s": "FLOP", "byte_per_s": "B", "run_per_s": "run"}


def _positive(value: Any) -> float | None:
    value = number(value)
    return value if value is not None and value > 0 else None


def _percent(value: Any) -> float | None:
    value = number(value)
    return value if value is not None and 0 <= value <= 100 else None


def rate_unit(unit: str) -> tuple[str, float] | None:
    """(unit of work, seconds per time unit) of a rate: 'ns/day' -> ('ns', 86400), 'steps/s' -> ('step', 1)
    (one unit of work, units.singular); None when the unit is not something per a time unit."""
    if not isinstance(unit, str):
        return None
    work, sep, per = unit.rpartition("/")
    seconds = PER_SECONDS.get(per.strip().lower()) if sep else None
    return (singular(work.strip()), seconds) if seconds and work.strip() else None


def work_unit(primary_metric: Any, primary_unit: Any, item_unit: Any = None) -> str | None:
    """The base unit of the primary figure's work that joules_per_unit is per: FLOP, B, run, an item's unit
    (request), a program's own unit (ns for ns/day); None when the figure is not a rate of work."""
    if primary_metric in _METRIC_WORK:
        return _METRIC_WORK[primary_metric]
    if primary_metric == "item_per_s" and isinstance(item_unit, str) and item_unit:
        return item_unit
    found = rate_unit(primary_unit) if isinstance(primary_unit, str) else None
    return found[0] if found else None


def per_unit_label(unit: str | None) -> tuple[float, str]:
    """(factor, label) to show joules per ``unit``: FLOP -> (1e12, 'J/TFLOP'), B -> (1e9, 'J/GB'), run ->
    (1, 'J/run'), steps (a file before the singular rule) -> (1, 'J/step')."""
    factor, shown = _SCALED.get(unit or "", (1.0, singular(unit) if unit else "unit"))
    return factor, f"J/{shown}"


def format_per_unit(joules_per_unit: float | None, unit: str | None) -> str:
    """'0.552 J/TFLOP', '12.3 J/run', '0.0104 J/request'; '-' when missing."""
    if joules_per_unit is None:
        return "-"
    factor, label = per_unit_label(unit)
    return format_count(joules_per_unit * factor, label)


def unit_word(unit: str | None) -> str:
    """The unit energy is per, as a sentence says it: 'TFLOP', 'GB', 'request', 'run', 'ns'."""
    return per_unit_label(unit)[1][2:]


@dataclass(frozen=True)
class Energy:
    """A record's energy as read (module doc); figures None where missing; ``available`` only with joules."""

    available: bool
    reason: str
    joules: float | None = None
    per_unit: float | None = None      # joules per base unit of work (``unit``)
    unit: str | None = None            # FLOP, B, request, run, ns, ...
    mean_power_w: float | None = None
    span_s: float | None = None
    uncertainty: float | None = None
    method: str | None = None

    @classmethod
    def from_record(cls, r: Mapping[str, Any]) -> "Energy | None":
        """The record's energy; None when it has none (an older file)."""
        obj = r.get("energy") if isinstance(r, Mapping) else None
        if obj is None:
            return None
        if not isinstance(obj, Mapping):
            return cls(False, "malformed energy")
        reason = obj.get("reason") if isinstance(obj.get("reason"), str) else ""
        joules = _positive(obj.get("joules"))
        if obj.get("available") is not True or joules is None:
            return cls(False, reason or ("not available" if obj.get("available") is not True else "no joules"))
        work = r.get("work_per_iteration")
        written = obj.get("unit")  # mpsbench writes "J/FLOP", the sweep work_unit "FLOP"
        written = written[2:] if isinstance(written, str) and written.startswith("J/") and written[2:] else None
        unit = obj.get("work_unit") if isinstance(obj.get("work_unit"), str) and obj.get("work_unit") else \
            written or work_unit(r.get("primary_metric"), r.get("primary_unit"),
                                 work.get("item_unit") if isinstance(work, Mapping) else None)
        unit = singular(unit) if unit else unit  # files before the rule wrote "steps"
        per = _positive(obj.get("joules_per_unit"))
        if _metric_app(r):  # the program's rate has no known span: J per run, or nothing (app_energy.py)
            per, unit = _positive(obj.get("joules_per_run")), "run"
        if per is None and not reason:  # available, but no energy per unit of work: why
            written = obj.get("per_unit_reason")
            reason = written if isinstance(written, str) and written else METRIC_REASON if _metric_app(r) else ""
        method = obj.get("method")
        return cls(True, reason, joules, per, unit, _positive(obj.get("mean_power_w")),
                   _positive(obj.get("span_s")), _nonneg(obj.get("uncertainty")),
                   method if isinstance(method, str) else None)

    @property
    def usable(self) -> bool:
        """Whether there is an energy per unit of work to compare."""
        return self.available and self.per_unit is not None


def _metric_app(r: Mapping[str, Any]) -> bool:
    """An application measured by the rate it prints (--app-metric), whose span is unknown."""
    app = r.get("app")
    metric = app.get("metric") if isinstance(app, Mapping) else None
    return r.get("kind") == "app" and isinstance(metric, Mapping) and metric.get("method") == "metric" \
        and r.get("primary_metric") == "metric_per_s"


def _nonneg(value: Any) -> float | None:
    value = number(value)
    return value if value is not None and value >= 0 else None


@dataclass(frozen=True)
class Activity:
    """A record's GPU activity as read (module doc): percentages, None where missing."""

    available: bool
    reason: str
    sm_active: float | None = None
    sm_occupancy: float | None = None
    dram_bw: float | None = None
    tensor_active: float | None = None
    per_gpu: tuple[Mapping[str, Any], ...] = ()

    @classmethod
    def from_record(cls, r: Mapping[str, Any]) -> "Activity | None":
        obj = r.get("gpu_activity") if isinstance(r, Mapping) else None
        if obj is None:
            return None
        if not isinstance(obj, Mapping):
            return cls(False, "malformed gpu_activity")
        reason = obj.get("reason") if isinstance(obj.get("reason"), str) else ""
        figures = {k: _percent(obj.get(k)) for k in ACTIVITY_FIELDS}
        if obj.get("available") is not True or all(v is None for v in figures.values()):
            return cls(False, reason or "not available")
        per_gpu = obj.get("per_gpu")
        gpus = tuple(g for g in per_gpu if isinstance(g, Mapping)) if isinstance(per_gpu, list) else ()
        return cls(True, reason, per_gpu=gpus, **figures)


def energy_ratio(mine: Energy | None, other: Energy | None) -> float | None:
    """My energy per unit of work over the other's (below 1: less energy for the same work); None unless both
    have one in the same unit."""
    if mine is None or other is None or not (mine.usable and other.usable) or mine.unit != other.unit:
        return None
    return mine.per_unit / other.per_unit
