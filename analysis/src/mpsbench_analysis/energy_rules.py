"""The shape of a record's ``energy`` and ``gpu_activity`` (core energy.py says what they hold); derived.py
re-derives their figures.  Files are read with unknown fields allowed and a version-2 schema does not know these
objects (nor does the current one say all of this), so each type and range is checked here: a figure that could
not be had is ``available: false`` with a non-empty ``reason`` and no figure, never a zero passing as one; an
available energy has positive ``joules`` and a ``per_unit_reason`` where ``joules_per_unit`` is null, its
``work_unit`` that of the primary figure (core energy.work_unit; "steps" read as "step": core units.singular); an
available activity at least one percentage, each GPU's (``per_gpu``) too.
"""

from __future__ import annotations

import math
from typing import Any

from mpsbench_core.energy import ACTIVITY_FIELDS, work_unit
from mpsbench_core.units import singular

from .derived import number, show
from .rules import Refusals

_FIGURES = ("joules", "joules_per_unit", "mean_power_w")
#: The numbers of an available energy, key -> (low, strict, high): above low (at least low where not strict).
_ENERGY = {**dict.fromkeys(("joules", "mean_power_w", "span_s", "work", "joules_per_run", "joules_per_unit"),
                           (0.0, True, None)), "uncertainty": (0.0, False, None)}
#: An activity figure, the record's and each GPU's: a percentage.
_PERCENT = dict.fromkeys(ACTIVITY_FIELDS, (0.0, False, 100.0))


def _numbers(obj: dict[str, Any], ranges: dict[str, tuple], where: str) -> Refusals:
    """Each key of ``ranges`` in ``obj`` a number in its range (at most high where given), null or absent."""
    for key, (low, strict, high) in ranges.items():
        value = obj.get(key)
        in_range = number(value) and math.isfinite(value) and (value > low if strict else value >= low)
        if value is not None and not (in_range and (high is None or value <= high)):
            what = f"a number {'above' if strict else 'at least'} {low:g}"
            yield f"{where}.{key}", f"expected {what}{f' and at most {high:g}' if high else ''}, got {show(value)}"


def _unavailable(obj: Any, figures: tuple[str, ...], where: str) -> Refusals:
    """What both objects share: an object, ``available`` a flag, where false a reason and none of ``figures``."""
    if not isinstance(obj, dict):
        yield where, f"expected an object, got {show(obj)}"
    elif not isinstance(obj.get("available"), bool):
        yield f"{where}.available", f"expected true or false, got {show(obj.get('available'))}"
    elif not obj["available"]:
        reason, shown = obj.get("reason"), [k for k in figures if obj.get(k) is not None]
        if not isinstance(reason, str) or not reason.strip():
            yield f"{where}.reason", "not available, but no reason is given"
        elif shown:
            yield f"{where}.{shown[0]}", f"{show(obj[shown[0]])}, but the figure is not available ({reason})"


def metered(r: dict[str, Any]) -> Refusals:
    """The shape of ``r["energy"]``, then of ``r["gpu_activity"]`` (module doc); a record without them passes."""
    e, a = r.get("energy"), r.get("gpu_activity")
    yield from _unavailable(e, _FIGURES, "energy") if e is not None else ()
    if e is not None and e["available"]:
        if e.get("joules") is None:
            yield "energy.joules", ("available, but no joules (a figure that cannot be had is available: false "
                                    "with a reason)")
        yield from _numbers(e, _ENERGY, "energy")
        for key in ("method", "work_unit"):
            if e.get(key) is not None and not isinstance(e[key], str):
                yield f"energy.{key}", f"expected a string or null, got {show(e[key])}"
        work = r.get("work_per_iteration")
        expected = work_unit(r.get("primary_metric"), r.get("primary_unit"),
                             work.get("item_unit") if isinstance(work, dict) else None)
        if e.get("work_unit") and expected and singular(e["work_unit"]) != expected:
            yield "energy.work_unit", (f"{e['work_unit']!r}, but the primary figure ({r.get('primary_unit')}) does "
                                       f"its work in {expected!r}")
        reason = e.get("per_unit_reason")
        if e.get("joules_per_unit") is None and (not isinstance(reason, str) or not reason.strip()):
            yield "energy.joules_per_unit", "null, but no per_unit_reason says why"
    yield from _unavailable(a, ACTIVITY_FIELDS, "gpu_activity") if a is not None else ()
    if a is not None and a["available"]:
        yield from _numbers(a, _PERCENT, "gpu_activity")
        if all(a.get(k) is None for k in ACTIVITY_FIELDS):
            yield "gpu_activity.sm_active", "available, but no figure is given"
        per_gpu = a.get("per_gpu")
        if per_gpu is not None and (not isinstance(per_gpu, list) or not all(isinstance(g, dict) for g in per_gpu)):
            yield "gpu_activity.per_gpu", f"expected a list of objects, got {show(per_gpu)}"
        for j, g in enumerate(per_gpu or []):
            yield from _numbers(g, _PERCENT, f"gpu_activity.per_gpu[{j}]")
