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
  * each copy has its own index ``copy`` below ``active_ranks``; so has each failed run;
  * with the program's own figure (``primary_metric`` ``metric_per_s``, ``app.metric``; issue 26): the
    primary figure is ``aggregate.metric_per_s`` (CV, noise and the speedup follow it), each repetition's
    sample the sum over the copies of their own (``copies[].metric_per_s.samples[i]``, where every copy has
    one), Jain's index over the copies' medians of it (the record's and ``app.metric.jain_fairness``),
    ``app.metric.copy_spread`` (largest - smallest) / mean of those medians, each copy's ``startup_s`` one
    sample per repetition, ``app.startup_share`` a share in [0, 1].
The copy count, windows, CV, noise and MPS client flags are checked as for every kind (checks.py), the
speedup over one copy per GPU against that record (run_consistency.py).
"""

from __future__ import annotations

import math
from typing import Any

from mpsbench_core.stats import mean

from .checks import REL_TOL, SUM_TOL, check_common, check_spread, check_jain, check_rates, check_summary, short
from .errors import AnalysisError

#: The primary metric of a program's own figure.
METRIC = "metric_per_s"


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


def _copy_figures(r: dict[str, Any], name: str, where: str) -> list[dict[str, Any]] | None:
    """Each copy's own figure (checked as a summary), or None where some copy has none."""
    figures = []
    for j, c in enumerate(r["copies"]):
        for key in ("metric_per_s", "startup_s"):
            summary = c.get(key)
            if summary is not None:
                if not isinstance(summary, dict) or not isinstance(summary.get("samples"), list):
                    raise AnalysisError(f"expected a summary or null, got {short(summary)}", name,
                                        f"{where}.copies[{j}].{key}")
                check_summary(summary, r["repetitions"], name, f"{where}.copies[{j}].{key}")
        figures.append(c.get("metric_per_s"))
    return figures if figures and all(f is not None for f in figures) else None


def _check_metric(r: dict[str, Any], name: str, where: str) -> None:
    """The program's own figure (module doc)."""
    app, aggregate = r["app"], r["aggregate"]
    share = app.get("startup_share")
    if share is not None and not (isinstance(share, (int, float)) and not isinstance(share, bool) and 0 <= share <= 1):
        raise AnalysisError(f"expected a share in [0, 1] or null, got {short(share)}", name, f"{where}.app.startup_share")
    figures = _copy_figures(r, name, where)
    if r["primary_metric"] != METRIC or aggregate is None:
        return
    if METRIC not in aggregate:
        raise AnalysisError("required field is missing (the primary metric)", name, f"{where}.aggregate.{METRIC}")
    summary = aggregate[METRIC]
    check_summary(summary, r["repetitions"], name, f"{where}.aggregate.{METRIC}")
    if figures is None:
        return
    for i, sample in enumerate(summary["samples"]):
        total = math.fsum(f["samples"][i] for f in figures)
        if not math.isclose(sample, total, rel_tol=SUM_TOL, abs_tol=1e-300):
            raise AnalysisError(f"{sample!r} disagrees with the sum over the copies of copies[].metric_per_s."
                                f"samples[{i}], {total!r}", name, f"{where}.aggregate.{METRIC}.samples[{i}]")
    medians = [f["median"] for f in figures]
    metric = app.get("metric") if isinstance(app.get("metric"), dict) else {}
    check_jain(metric.get("jain_fairness"), medians, name, f"{where}.app.metric.jain_fairness",
               "copies[].metric_per_s.median")
    spread, average = metric.get("copy_spread"), mean(medians)
    if isinstance(spread, (int, float)) and not isinstance(spread, bool) and average > 0:
        expected = (max(medians) - min(medians)) / average
        if not math.isclose(spread, expected, rel_tol=SUM_TOL, abs_tol=1e-12):
            raise AnalysisError(f"{spread!r} disagrees with (largest - smallest) / mean of copies[].metric_per_s."
                                f"median, {expected!r}", name, f"{where}.app.metric.copy_spread")


def check_app(r: dict[str, Any], name: str, where: str) -> None:
    """Raises AnalysisError on the first disagreement in a schema-valid application record (module doc)."""
    aggregate = r["aggregate"]
    check_common(r, "copies", name, where)
    if r["window_s"] and aggregate is None:
        raise AnalysisError(f"null, but window_s holds {len(r['window_s'])} measured repetitions", name,
                            f"{where}.aggregate")
    _check_runs(r, name, where)
    _check_metric(r, name, where)
    own = r["primary_metric"] == METRIC
    primary = aggregate.get(r["primary_metric"]) if aggregate is not None else None
    check_spread(r, primary["samples"] if primary is not None else None, name, where)
    if r["copies"] and (not own or _copy_figures(r, name, where) is not None):
        per_copy = [c["metric_per_s"]["median"] if own else c["throughput_per_s"] for c in r["copies"]]
        check_jain(r["jain_fairness"], per_copy, name, f"{where}.jain_fairness",
                   "copies[].metric_per_s.median" if own else "copies[].throughput_per_s")
    _check_copies(r, name, where)
    _check_verified(r, name, where)
