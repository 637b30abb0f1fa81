"""Energy per unit of work and GPU activity as table columns (core energy.py reads the records).

Every result row gets (rows.py), NaN or None where the record has no such figure (older files, a failed
configuration, ``available: false``):
  ``energy_available`` True/False (None: the record has no energy), ``energy_reason`` (why not available, or
  why an available energy has no figure per unit of work: a program's rate over an unknown span),
  ``joules``, ``joules_per_unit`` (J per base unit of work), ``energy_unit`` (FLOP, B, request, run, ns, step),
  ``mean_power_w``, ``energy_span_s``, ``energy_uncertainty``;
  ``activity_available``, ``activity_reason`` and the percentages ``sm_active``, ``sm_occupancy``, ``dram_bw``,
  ``tensor_active``.
People read the energy per unit scaled as its throughput is (core per_unit_label: J/TFLOP, J/GB).
"""

from __future__ import annotations

import math
from typing import Any

import pandas as pd

from mpsbench_core.energy import ACTIVITY_FIELDS, Activity, Energy, format_per_unit

#: The energy and activity columns of a result row.
COLUMNS = ("energy_available", "energy_reason", "joules", "joules_per_unit", "energy_unit", "mean_power_w",
           "energy_span_s", "energy_uncertainty", "activity_available", "activity_reason") + ACTIVITY_FIELDS
#: Of those, the ones that hold True/False/None or text (kept as they are by the loader).
OBJECT_COLUMNS = ("energy_available", "activity_available")


def _value(value: float | None) -> float:
    return math.nan if value is None else value


def energy_columns(r: dict[str, Any]) -> dict[str, Any]:
    """The energy and activity columns of one validated record (a failed record's figures are not shown)."""
    ok = r.get("status") == "ok"
    e = Energy.from_record(r)
    a = Activity.from_record(r)
    shown = e is not None and e.available and ok
    out: dict[str, Any] = {
        "energy_available": None if e is None else shown,
        "energy_reason": "" if e is None or (shown and e.per_unit is not None) else
        (e.reason or ("no energy per unit of work" if shown else "the configuration failed")),
        "joules": _value(e.joules) if shown else math.nan,
        "joules_per_unit": _value(e.per_unit) if shown else math.nan,
        "energy_unit": (e.unit or "") if shown else "",
        "mean_power_w": _value(e.mean_power_w) if shown else math.nan,
        "energy_span_s": _value(e.span_s) if shown else math.nan,
        "energy_uncertainty": _value(e.uncertainty) if shown else math.nan,
    }
    active = a is not None and a.available and ok
    out.update({"activity_available": None if a is None else active,
                "activity_reason": "" if a is None or active else (a.reason or "the configuration failed")})
    out.update({k: _value(getattr(a, k)) if active else math.nan for k in ACTIVITY_FIELDS})
    return out


def has_energy(df: pd.DataFrame | None) -> bool:
    """Whether some row carries energy, a figure or ``available: false`` (shown as unavailable)."""
    return df is not None and "energy_available" in df and bool(df["energy_available"].notna().any())


def has_activity(df: pd.DataFrame | None) -> bool:
    """Whether some row carries GPU activity, figures or ``available: false``."""
    return df is not None and "activity_available" in df and bool(df["activity_available"].notna().any())


def per_unit_text(value: float, row: pd.Series) -> str:
    """A table cell: '0.552 J/TFLOP'; 'unavailable' where the record says so (its reason: unavailable_note);
    '-' where the record has no energy."""
    if value is None or not math.isfinite(value):
        available = row.get("energy_available")
        return "unavailable" if available is False or (available is True and row.get("energy_reason")) else "-"
    return format_per_unit(float(value), row["energy_unit"] or None)


def unavailable_note(df: pd.DataFrame | None) -> str:
    """One line naming why energy or SM activity is unavailable, each reason with its count of rows:
    'energy unavailable: the CPU device: no GPU energy counter (4 results)'; "" where every figure is there."""
    if df is None:
        return ""
    parts = []
    for what, flag, reason, missing_if in (
            ("energy", "energy_available", "energy_reason", lambda v: v is False),
            ("energy per unit of work", "energy_available", "energy_reason", lambda v: v is True),
            ("SM activity", "activity_available", "activity_reason", lambda v: v is False)):
        if flag not in df:
            continue
        missing = df[df[flag].map(missing_if) & (df[reason].astype(str) != "")]
        if not missing.empty:
            counts = missing[reason].value_counts(sort=False)
            parts.append(f"{what} unavailable: " + "; ".join(
                f"{text} ({n} result{'s' if n != 1 else ''})" for text, n in counts.items()))
    return ". ".join(parts) + ("." if parts else "")


def percent_text(value: float, row: pd.Series | None = None) -> str:
    """A table cell: '81.5%'; 'unavailable' where the record says so; '-' without a figure."""
    if value is None or not math.isfinite(value):
        return "unavailable" if row is not None and row.get("activity_available") is False else "-"
    return f"{value:.1f}%"
