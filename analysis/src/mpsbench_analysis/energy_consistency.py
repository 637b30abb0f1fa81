"""Checks of a record's ``energy`` and ``gpu_activity`` (core energy.py says what they hold): a figure that could
not be had must say why and show nothing, and every figure shown must agree with the others.

The schema of this package may not know these objects yet (files are read with unknown fields allowed), so
every type and range is checked here too.  For any kind of record:

energy
  * an object with ``available`` true or false;
  * not available: a ``reason`` (a non-empty string) and no figure (``joules``, ``joules_per_unit``,
    ``mean_power_w`` null or absent): never a zero passing as a figure;
  * available: ``joules`` a positive number (a zero is no measurement); ``mean_power_w`` and ``span_s`` positive
    (or null); ``uncertainty`` >= 0 (or null); ``method`` and ``work_unit`` strings (or null);
  * ``mean_power_w`` x the kept window time (Σ ``window_s``: mpsbench's joules are each GPU's mean power
    over its metered span times the kept windows, summed) or x ``span_s`` (a writer whose span is the
    window, the sweep's) = ``joules`` within POWER_TOL;
  * ``joules_per_unit`` positive, or null with a ``per_unit_reason`` (a program's figure that is no rate of
    work, or whose span is unknown); its unit, ``work_unit`` where given, the primary figure's (core
    energy.work_unit: FLOP, B, the item's unit, run, the X of a program's X per time unit, one of it named
    in the singular, as core units.singular says: a file that wrote "steps" for "step" is read alike);
  * ``joules_per_unit`` = ``joules`` / the work over the kept repetitions: where the record gives that work
    (``work``, an application's: core app_energy.py, the definition the sweep writes with), exactly
    core app_energy.per_unit(joules, work); else for a kernel or mix, Σ aggregate.<primary>.samples[i] ×
    window_s[i]; or, where the meter spanned other stretches than the windows (an application's spans
    in files before ``work``; a kernel metered over an extra stretch of the same work), the work at the
    repetitions' rates over ``span_s``, which lies between the smallest and the largest rate times the
    span (per the rate's time unit: ns/day works in days);
  * an application's ``joules_per_run`` (where given) = core app_energy.per_unit(joules, the runs counted,
    Σ app.runs_per_repetition).
gpu_activity
  * an object with ``available`` true or false; not available: a ``reason`` and no figure;
  * available: ``sm_active``, ``sm_occupancy``, ``dram_bw``, ``tensor_active`` each a percentage in [0, 100]
    or null, at least one of them a number; ``per_gpu`` a list of objects with the same figures, and each
    figure of the whole a mean of the GPUs': between the smallest and the largest of theirs.
"""

from __future__ import annotations

import math
from typing import Any

from mpsbench_core.app_energy import per_unit as joules_per
from mpsbench_core.energy import ACTIVITY_FIELDS, rate_unit, work_unit
from mpsbench_core.records import kind_of
from mpsbench_core.units import singular

from .checks import SUM_TOL, short
from .errors import AnalysisError

_FIGURES = ("joules", "joules_per_unit", "mean_power_w")
#: How far mean_power_w x span_s may be from joules (relative).
POWER_TOL = 0.05


def _is_number(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value)


def _optional(obj: dict[str, Any], key: str, name: str, where: str, low: float, strict: bool = True,
              high: float | None = None) -> float | None:
    """obj[key] when it is a number in range (> low, or >= low where not strict; <= high), None when null or
    absent; anything else is refused."""
    value = obj.get(key)
    if value is None:
        return None
    ok = _is_number(value) and (value > low if strict else value >= low) and (high is None or value <= high)
    if not ok:
        what = f"a number {'above' if strict else 'at least'} {low:g}" + (f" and at most {high:g}" if high else "")
        raise AnalysisError(f"expected {what}, got {short(value)}", name, f"{where}.{key}")
    return float(value)


def _string(obj: dict[str, Any], key: str, name: str, where: str) -> str | None:
    value = obj.get(key)
    if value is not None and not isinstance(value, str):
        raise AnalysisError(f"expected a string or null, got {short(value)}", name, f"{where}.{key}")
    return value


def _head(obj: Any, figures: tuple[str, ...], name: str, where: str) -> bool:
    """The checks both objects share; returns ``available``."""
    if not isinstance(obj, dict):
        raise AnalysisError(f"expected an object, got {short(obj)}", name, where)
    available = obj.get("available")
    if not isinstance(available, bool):
        raise AnalysisError(f"expected true or false, got {short(available)}", name, f"{where}.available")
    if not available:
        reason = obj.get("reason")
        if not isinstance(reason, str) or not reason.strip():
            raise AnalysisError("not available, but no reason is given", name, f"{where}.reason")
        shown = [k for k in figures if obj.get(k) is not None]
        if shown:
            raise AnalysisError(f"{short(obj[shown[0]])}, but the figure is not available ({reason})", name,
                                f"{where}.{shown[0]}")
    return available


def _primary(r: dict[str, Any]) -> list[float]:
    aggregate = r.get("aggregate") or {}
    summary = aggregate.get(r.get("primary_metric")) if isinstance(aggregate, dict) else None
    return list(summary["samples"]) if isinstance(summary, dict) else []


def _agrees(written: float, expected: float | None, what: str, name: str, where: str) -> None:
    if expected is None or not math.isclose(written, expected, rel_tol=SUM_TOL):
        raise AnalysisError(f"{written!r} disagrees with {what} = {expected!r}", name, where)


def _check_app_work(r: dict[str, Any], e: dict[str, Any], per_unit: float | None, joules: float, name: str,
                    where: str) -> None:
    """An application's work and joules_per_run, core app_energy's definitions (module doc)."""
    work = _optional(e, "work", name, where, 0.0)
    if work is not None and per_unit is not None:
        _agrees(per_unit, joules_per(joules, work), "core app_energy.per_unit(joules, work)", name,
                f"{where}.joules_per_unit")
    per_run = _optional(e, "joules_per_run", name, where, 0.0)
    runs = (r.get("app") or {}).get("runs_per_repetition") if kind_of(r) == "app" else None
    if per_run is not None and isinstance(runs, list) and r.get("status") == "ok":
        _agrees(per_run, joules_per(joules, sum(runs)), "joules / the runs counted (Σ app.runs_per_repetition)",
                name, f"{where}.joules_per_run")


def _check_work(r: dict[str, Any], e: dict[str, Any], per_unit: float, joules: float, name: str, where: str) -> None:
    """joules_per_unit against the work of the kept repetitions, where the record does not give it (module doc)."""
    if e.get("work") is not None:
        return  # checked exactly (_check_app_work)
    samples, windows = _primary(r), r.get("window_s") or []
    app = kind_of(r) == "app"
    rate = rate_unit(r.get("primary_unit") or "") if app else None
    seconds = rate[1] if rate else 1.0
    if not app and len(samples) == len(windows) and samples:
        work = math.fsum(s * w for s, w in zip(samples, windows))
        if work > 0 and math.isclose(per_unit, joules / work, rel_tol=SUM_TOL):
            return
    span = e.get("span_s")
    if not samples or not _is_number(span) or min(samples) <= 0:
        if not app and samples:
            raise AnalysisError(f"{per_unit!r} disagrees with joules / the work of the kept repetitions (Σ "
                                f"aggregate.{r.get('primary_metric')}.samples[i] x window_s[i])", name,
                                f"{where}.joules_per_unit")
        return
    low, high = joules / (max(samples) * span / seconds), joules / (min(samples) * span / seconds)
    if not low * (1 - SUM_TOL) <= per_unit <= high * (1 + SUM_TOL):
        raise AnalysisError(f"{per_unit!r} disagrees with joules / the work of the kept repetitions: over span_s "
                            f"{span!r} s at their rates that is {low!r} to {high!r}", name, f"{where}.joules_per_unit")


def check_energy(r: dict[str, Any], name: str, where: str) -> None:
    """Raises AnalysisError on the first problem of ``r["energy"]`` (module doc); a record without one passes."""
    if r.get("energy") is None:
        return
    e, where = r["energy"], f"{where}.energy"
    if not _head(e, _FIGURES, name, where):
        return
    joules = _optional(e, "joules", name, where, 0.0)
    if joules is None:
        raise AnalysisError("available, but no joules (a figure that cannot be had is available: false with a "
                            "reason)", name, f"{where}.joules")
    power = _optional(e, "mean_power_w", name, where, 0.0)
    span = _optional(e, "span_s", name, where, 0.0)
    _optional(e, "uncertainty", name, where, 0.0, strict=False)
    _string(e, "method", name, where)
    unit = _string(e, "work_unit", name, where)
    windows = r.get("window_s") if isinstance(r.get("window_s"), list) else []
    kept = math.fsum(w for w in windows if _is_number(w)) if windows and all(_is_number(w) for w in windows) else 0.0
    times = [t for t in (kept, span) if t]
    if power is not None and times and not any(math.isclose(power * t, joules, rel_tol=POWER_TOL) for t in times):
        raise AnalysisError(f"{power!r} disagrees with joules / the kept window time or span_s = "
                            + " or ".join(f"{joules / t!r}" for t in times) + f" (by more than {POWER_TOL:.0%})",
                            name, f"{where}.mean_power_w")
    work = r.get("work_per_iteration")
    expected = work_unit(r.get("primary_metric"), r.get("primary_unit"),
                         work.get("item_unit") if isinstance(work, dict) else None)
    if unit and expected and singular(unit) != expected:
        raise AnalysisError(f"{unit!r}, but the primary figure ({r.get('primary_unit')}) does its work in "
                            f"{expected!r}", name, f"{where}.work_unit")
    per_unit = _optional(e, "joules_per_unit", name, where, 0.0)
    _check_app_work(r, e, per_unit, joules, name, where)
    if per_unit is None:
        if not isinstance(e.get("per_unit_reason"), str) or not e["per_unit_reason"].strip():
            raise AnalysisError("null, but no per_unit_reason says why", name, f"{where}.joules_per_unit")
        return
    if r.get("status") == "ok":
        _check_work(r, e, per_unit, joules, name, where)


def _check_figures(obj: dict[str, Any], name: str, where: str) -> dict[str, float | None]:
    return {k: _optional(obj, k, name, where, 0.0, strict=False, high=100.0) for k in ACTIVITY_FIELDS}


def check_activity(r: dict[str, Any], name: str, where: str) -> None:
    """Raises AnalysisError on the first problem of ``r["gpu_activity"]`` (module doc)."""
    if r.get("gpu_activity") is None:
        return
    a, where = r["gpu_activity"], f"{where}.gpu_activity"
    if not _head(a, ACTIVITY_FIELDS, name, where):
        return
    figures = _check_figures(a, name, where)
    if all(v is None for v in figures.values()):
        raise AnalysisError("available, but no figure is given", name, f"{where}.sm_active")
    per_gpu = a.get("per_gpu")
    if per_gpu is None:
        return
    if not isinstance(per_gpu, list) or not all(isinstance(g, dict) for g in per_gpu):
        raise AnalysisError(f"expected a list of objects, got {short(per_gpu)}", name, f"{where}.per_gpu")
    gpus = [_check_figures(g, name, f"{where}.per_gpu[{j}]") for j, g in enumerate(per_gpu)]
    for key, value in figures.items():
        theirs = [g[key] for g in gpus if g[key] is not None]
        if value is None or not theirs:
            continue
        if not min(theirs) - 1e-9 - SUM_TOL * value <= value <= max(theirs) + 1e-9 + SUM_TOL * value:
            raise AnalysisError(f"{value!r}, but the GPUs' (per_gpu[].{key}) range from {min(theirs)!r} to "
                                f"{max(theirs)!r}: a mean lies between", name, f"{where}.{key}")
