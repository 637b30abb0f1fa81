"""Energy between two runs, as notes of ``compare``: they explain a change and never fail the gate.

For every result of BASE and NEW that matches (loader KEY) and was measured in both:
  * both have an energy per unit of work (energy.py) in the same unit: the change new / base - 1; a change
    above the rule's threshold (``--threshold``, 5 % by default) is a note, "more energy per unit of work";
    a smaller figure is no note (it is not what a gate watches for);
  * BASE has one and NEW has none: a note with NEW's reason (a lost meter is worth knowing).
Energy is noted rather than judged because one figure per configuration (one metered span) has no
repetitions to tell a change from noise, and its uncertainty is the meter's, not the run's.
"""

from __future__ import annotations

import math

import pandas as pd

from mpsbench_core.energy import format_per_unit

from .loader import KEY

#: The columns of the energy notes.
COLUMNS = KEY + ["base_per_unit", "new_per_unit", "energy_unit", "change", "note"]


def energy_notes(base: pd.DataFrame, new: pd.DataFrame, threshold: float) -> pd.DataFrame:
    """One row per matching result whose energy per unit of work rose by more than ``threshold``, or that
    lost its energy figure (module doc)."""
    cols = KEY + ["status", "joules_per_unit", "energy_unit", "energy_reason"]
    if "joules_per_unit" not in base or "joules_per_unit" not in new:
        return pd.DataFrame(columns=COLUMNS)
    pairs = base[cols].merge(new[cols], on=KEY, suffixes=("_base", "_new"))
    rows = []
    for _, p in pairs.iterrows():
        if p["status_base"] != "ok" or p["status_new"] != "ok" or not math.isfinite(p["joules_per_unit_base"]):
            continue
        b, n = float(p["joules_per_unit_base"]), float(p["joules_per_unit_new"])
        unit = p["energy_unit_base"]
        row = {**{k: p[k] for k in KEY}, "base_per_unit": b, "new_per_unit": n, "energy_unit": unit}
        if not math.isfinite(n):
            why = p["energy_reason_new"] or "the record has none"
            rows.append({**row, "change": math.nan, "note": f"no energy figure in NEW: {why}"})
        elif p["energy_unit_new"] == unit and n / b - 1 > threshold:
            rows.append({**row, "change": n / b - 1, "note": f"more energy per unit of work: "
                                                            f"{format_per_unit(b, unit)} -> {format_per_unit(n, unit)}"})
    return pd.DataFrame(rows, columns=COLUMNS)
