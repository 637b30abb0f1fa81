"""Checks of an application record (kind ``app``, schema ``app_result``): every figure it shows must agree with
the runs it counts, and it must not claim a check it failed.

What the sweep writes (harness/sweep, mpsbench-sweep --app) and the checks that follow from it:
  * a repetition's throughput is its counted runs (every copy, each run whole, --app-check passed) over its
    window: ``aggregate.run_per_s.samples[i] = app.runs_per_repetition[i] / window_s[i]`` (0 for an empty
    window), one entry per repetition in each; the summary's median, min and max are its samples';
  * ``app.runs_per_hour`` is that median × 3600 (null when nothing was measured);
  * each copy's ``runs`` are its counted runs over all repetitions, so the copies' runs add up to the
    runs of the repetitions; a copy's ``run_time_s`` summarises one figure per repetition;
  * ``app.run_time_s`` is over every counted run (present exactly when some run counted):
    min <= median <= p95 <= max;
  * ``jain_fairness`` is Jain's index over the copies' ``throughput_per_s``;
  * a copy's ``check``: ``failed_runs`` of its ``checked_runs`` failed, ``ok`` when none did; without a
    check (``app.check`` null) no run was checked and none failed;
  * ``verified``: every run passed --app-check, i.e. ``app.failed_checks`` lists none, and no copy's
    check failed.  A record that claims ``verified`` while listing a failed check would pass a CI gate
    and could be picked as the best configuration by a verdict: it is refused;
  * each copy has its own index ``copy`` below ``active_ranks``; so has each failed run.
The copy count, windows, CV, noise and MPS client flags are checked as for every kind (checks.py), the
speedup over one copy per GPU against that record (run_consistency.py).
"""

from __future__ import annotations

import math
from typing import Any

from .checks import REL_TOL, check_common, check_spread, check_jain, check_rates, check_summary
from .errors import AnalysisError


def _check_runs(r: dict[str, Any], name: str, where: str) -> None:
    """The repetitions' runs against the windows, the aggregate, the copies and runs_per_hour."""
    app, aggregate = r["app"], r["aggregate"]
    runs = app["runs_per_repetition"]
    if (runs or r["window_s"]) and len(runs) != len(r["window_s"]):
        raise AnalysisError(f"{len(runs)} entries, but window_s has {len(r['window_s'])}", name,
                            f"{where}.app.runs_per_repetition")
    if aggregate is not None:
        summary = aggregate["run_per_s"]
        check_summary(summary, r["repetitions"], name, f"{where}.aggregate.run_per_s")
        check_rates(summary["samples"], [float(n) for n in runs], r["window_s"],
                    "app.runs_per_repetition[i] / window_s[i]", name, f"{where}.aggregate.run_per_s.samples")
        expected = summary["median"] * 3600.0
        if app["runs_per_hour"] is None or not math.isclose(app["runs_per_hour"], expected, rel_tol=REL_TOL):
            raise AnalysisError(f"{app['runs_per_hour']!r} disagrees with aggregate.run_per_s.median x 3600 = "
                                f"{expected!r}", name, f"{where}.app.runs_per_hour")
    elif app["runs_per_hour"] is not None:
        raise AnalysisError(f"{app['runs_per_hour']!r}, but the record measured no runs per second (aggregate "
                            "is null)", name, f"{where}.app.runs_per_hour")
    copies = r["copies"]
    if copies and sum(c["runs"] for c in copies) != sum(runs):
        raise AnalysisError(f"the copies' runs add up to {sum(c['runs'] for c in copies)}, but "
                            f"app.runs_per_repetition to {sum(runs)}", name, f"{where}.copies")
    run_time = app["run_time_s"]
    if run_time is not None:
        order = ["min", "median", "p95", "max"]
        for lower, upper in zip(order, order[1:]):
            if run_time[lower] > run_time[upper]:
                raise AnalysisError(f"{run_time[lower]!r} is above {upper} {run_time[upper]!r}", name,
                                    f"{where}.app.run_time_s.{lower}")
        if not sum(runs):
            raise AnalysisError("present, but no run was counted (app.runs_per_repetition)", name,
                                f"{where}.app.run_time_s")
    elif r["status"] == "ok" and sum(runs):
        raise AnalysisError(f"null, but {sum(runs)} runs were counted", name, f"{where}.app.run_time_s")


def _check_copies(r: dict[str, Any], name: str, where: str) -> None:
    checked = r["app"]["check"] is not None
    seen: dict[int, int] = {}
    for j, c in enumerate(r["copies"]):
        at = f"{where}.copies[{j}]"
        if c["copy"] >= r["active_ranks"] or c["copy"] in seen:
            why = (f"also copies[{seen[c['copy']]}]'s" if c["copy"] in seen
                   else f"not below active_ranks {r['active_ranks']}")
            raise AnalysisError(f"{c['copy']}, {why}", name, f"{at}.copy")
        seen[c["copy"]] = j
        if c["run_time_s"] is not None:
            check_summary(c["run_time_s"], r["repetitions"], name, f"{at}.run_time_s")
        check = c["check"]
        if check["failed_runs"] > check["checked_runs"]:
            raise AnalysisError(f"{check['failed_runs']}, but only {check['checked_runs']} runs were checked", name,
                                f"{at}.check.failed_runs")
        if check["ok"] != (check["failed_runs"] == 0):
            raise AnalysisError(f"{str(check['ok']).lower()}, but {check['failed_runs']} checked runs failed", name,
                                f"{at}.check.ok")
        if not checked and check["checked_runs"]:
            raise AnalysisError(f"{check['checked_runs']}, but the application has no check (app.check is null)",
                                name, f"{at}.check.checked_runs")
    for j, run in enumerate(r["app"]["failed_runs"]):
        copy = run.get("copy")
        if isinstance(copy, int) and not isinstance(copy, bool) and not 0 <= copy < r["active_ranks"]:
            raise AnalysisError(f"{copy}, but the copies are 0 to {r['active_ranks'] - 1}", name,
                                f"{where}.app.failed_runs[{j}].copy")


def _check_verified(r: dict[str, Any], name: str, where: str) -> None:
    app = r["app"]
    failed_checks = app["failed_checks"]
    if failed_checks and app["check"] is None:
        raise AnalysisError(f"{len(failed_checks)} entries, but the application has no check (app.check is null)",
                            name, f"{where}.app.failed_checks")
    failing = [j for j, c in enumerate(r["copies"]) if not c["check"]["ok"]]
    if r["verified"]:
        if failed_checks:
            raise AnalysisError(f"true, but app.failed_checks lists {len(failed_checks)} failed --app-check "
                                f"run(s)", name, f"{where}.verified")
        if failing:
            raise AnalysisError(f"true, but copies[{failing[0]}].check.ok is false", name, f"{where}.verified")
    elif r["status"] == "ok" and not failed_checks:
        raise AnalysisError("false, but app.failed_checks lists no failed --app-check run", name,
                            f"{where}.verified")


def check_app(r: dict[str, Any], name: str, where: str) -> None:
    """Raises AnalysisError on the first disagreement in a schema-valid application record (module doc)."""
    aggregate = r["aggregate"]
    check_common(r, "copies", name, where)
    if r["window_s"] and aggregate is None:
        raise AnalysisError(f"null, but window_s holds {len(r['window_s'])} measured repetitions", name,
                            f"{where}.aggregate")
    _check_runs(r, name, where)
    check_spread(r, aggregate["run_per_s"]["samples"] if aggregate is not None else None, name, where)
    if r["copies"]:
        check_jain(r["jain_fairness"], [c["throughput_per_s"] for c in r["copies"]], name, f"{where}.jain_fairness",
                   "copies[].throughput_per_s")
    _check_copies(r, name, where)
    _check_verified(r, name, where)
