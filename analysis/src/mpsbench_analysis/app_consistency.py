"""Checks of an application record (kind ``app``, schema ``app_result``): the figures it shows must agree with
the runs it counts.

What the sweep writes (harness/sweep, mpsbench-sweep --app) and the checks that follow from it:
  * a repetition's throughput is its counted runs (every copy, each run whole, --app-check passed) over its
    window: ``aggregate.run_per_s.samples[i] = app.runs_per_repetition[i] / window_s[i]`` (0 for an empty
    window), one entry per repetition in each; the summary's median, min and max are its samples';
  * a copy's ``run_time_s`` summarises one figure per repetition;
  * ``jain_fairness`` is Jain's index over the copies' ``throughput_per_s``;
  * ``verified`` is not true while a copy's check failed.
The copy count, windows and CV are checked as for every kind (checks.py).
"""

from __future__ import annotations

from typing import Any

from .checks import check_common, check_jain, check_rates, check_spread, check_summary
from .errors import AnalysisError


def check_app(r: dict[str, Any], name: str, where: str) -> None:
    """Raises AnalysisError on the first disagreement in a schema-valid application record (module doc)."""
    aggregate = r["aggregate"]
    check_common(r, "copies", name, where)
    if r["window_s"] and aggregate is None:
        raise AnalysisError(f"null, but window_s holds {len(r['window_s'])} measured repetitions", name,
                            f"{where}.aggregate")
    runs = r["app"]["runs_per_repetition"]
    if (runs or r["window_s"]) and len(runs) != len(r["window_s"]):
        raise AnalysisError(f"{len(runs)} entries, but window_s has {len(r['window_s'])}", name,
                            f"{where}.app.runs_per_repetition")
    if aggregate is not None:
        summary = aggregate["run_per_s"]
        check_summary(summary, r["repetitions"], name, f"{where}.aggregate.run_per_s")
        check_rates(summary["samples"], [float(n) for n in runs], r["window_s"],
                    "app.runs_per_repetition[i] / window_s[i]", name, f"{where}.aggregate.run_per_s.samples")
    check_spread(r, aggregate["run_per_s"]["samples"] if aggregate is not None else None, name, where)
    if r["copies"]:
        check_jain(r["jain_fairness"], [c["throughput_per_s"] for c in r["copies"]], name, f"{where}.jain_fairness",
                   "copies[].throughput_per_s")
    for j, c in enumerate(r["copies"]):
        if c["run_time_s"] is not None:
            check_summary(c["run_time_s"], r["repetitions"], name, f"{where}.copies[{j}].run_time_s")
    failing = [j for j, c in enumerate(r["copies"]) if not c["check"]["ok"]]
    if r["verified"] and failing:
        raise AnalysisError(f"true, but copies[{failing[0]}].check.ok is false", name, f"{where}.verified")
