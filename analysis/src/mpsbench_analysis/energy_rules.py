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
from .errors import AnalysisError

_FIGURES = ("joules", "joules_per_unit", "mean_power_w")


def _optional(obj: dict[str, Any], key: str, name: str, where: str, low: float, strict: bool = True,
              high: float | None = None) -> None:
    """obj[key] a number in range (> low, or >= low where not strict; <= high), null or absent."""
    value = obj.get(key)
    in_range = number(value) and math.isfinite(value) and (value > low if strict else value >= low)
    if value is not None and not (in_range and (high is None or value <= high)):
        what = f"a number {'above' if strict else 'at least'} {low:g}" + (f" and at most {high:g}" if high else "")
        raise AnalysisError(f"expected {what}, got {show(value)}", name, f"{where}.{key}")


def _string(obj: dict[str, Any], key: str, name: str, where: str) -> None:
    if obj.get(key) is not None and not isinstance(obj[key], str):
        raise AnalysisError(f"expected a string or null, got {show(obj[key])}", name, f"{where}.{key}")


def _head(obj: Any, figures: tuple[str, ...], name: str, where: str) -> bool:
    """What both objects share; returns ``available``."""
    if not isinstance(obj, dict):
        raise AnalysisError(f"expected an object, got {show(obj)}", name, where)
    available = obj.get("available")
    if not isinstance(available, bool):
        raise AnalysisError(f"expected true or false, got {show(available)}", name, f"{where}.available")
    if not available:
        reason = obj.get("reason")
        if not isinstance(reason, str) or not reason.strip():
            raise AnalysisError("not available, but no reason is given", name, f"{where}.reason")
        shown = [k for k in figures if obj.get(k) is not None]
        if shown:
            raise AnalysisError(f"{show(obj[shown[0]])}, but the figure is not available ({reason})", name,
                                f"{where}.{shown[0]}")
    return available


def check_energy(r: dict[str, Any], name: str, where: str) -> None:
    """Raises AnalysisError on the first problem of the shape of ``r["energy"]``; a record without one passes."""
    if r.get("energy") is None:
        return
    e, where = r["energy"], f"{where}.energy"
    if not _head(e, _FIGURES, name, where):
        return
    if e.get("joules") is None:
        raise AnalysisError("available, but no joules (a figure that cannot be had is available: false with a "
                            "reason)", name, f"{where}.joules")
    for key in ("joules", "mean_power_w", "span_s", "work", "joules_per_run", "joules_per_unit"):
        _optional(e, key, name, where, 0.0)
    _optional(e, "uncertainty", name, where, 0.0, strict=False)
    _string(e, "method", name, where)
    _string(e, "work_unit", name, where)
    work = r.get("work_per_iteration")
    expected = work_unit(r.get("primary_metric"), r.get("primary_unit"),
                         work.get("item_unit") if isinstance(work, dict) else None)
    if e.get("work_unit") and expected and singular(e["work_unit"]) != expected:
        raise AnalysisError(f"{e['work_unit']!r}, but the primary figure ({r.get('primary_unit')}) does its work in "
                            f"{expected!r}", name, f"{where}.work_unit")
    if e.get("joules_per_unit") is None and (not isinstance(e.get("per_unit_reason"), str) or
                                             not e["per_unit_reason"].strip()):
        raise AnalysisError("null, but no per_unit_reason says why", name, f"{where}.joules_per_unit")


def check_activity(r: dict[str, Any], name: str, where: str) -> None:
    """Raises AnalysisError on the first problem of the shape of ``r["gpu_activity"]``."""
    if r.get("gpu_activity") is None:
        return
    a, where = r["gpu_activity"], f"{where}.gpu_activity"
    if not _head(a, ACTIVITY_FIELDS, name, where):
        return
    for key in ACTIVITY_FIELDS:
        _optional(a, key, name, where, 0.0, strict=False, high=100.0)
    if all(a.get(k) is None for k in ACTIVITY_FIELDS):
        raise AnalysisError("available, but no figure is given", name, f"{where}.sm_active")
    per_gpu = a.get("per_gpu")
    if per_gpu is not None and (not isinstance(per_gpu, list) or not all(isinstance(g, dict) for g in per_gpu)):
        raise AnalysisError(f"expected a list of objects, got {show(per_gpu)}", name, f"{where}.per_gpu")
    for j, g in enumerate(per_gpu or []):
        for key in ACTIVITY_FIELDS:
            _optional(g, key, name, f"{where}.per_gpu[{j}]", 0.0, strict=False, high=100.0)
