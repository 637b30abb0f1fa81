"""The rules of a record that are no derivation (derived.py re-derives its figures); analysis/README.md lists them.

:func:`shape` runs before the derivations, so that what they derive from has its shape: counts (one entry per
instance and per repetition), measured objects present, each instance's MPS flag its mode's (core modes), a mix's
tenants its name's and its ranks shared out as they say, an application's copy indices, the types of the
optional objects (energy_rules.py, quality.py).  :func:`claims` runs after them: ``verified`` never true while a
rank, the collective or a copy's check failed (the CI gate relies on it), a copy's check ``ok`` exactly when
none of its runs failed, ``noise.met``, the copies' runs adding up, percentiles in order.  A failed record may
leave its measured fields empty (the writers do); what it does fill in must agree.
"""

from __future__ import annotations

from typing import Any

from mpsbench_core import modes
from mpsbench_core.records import kind_of

from .derived import METRIC, at, number, show
from .energy_rules import check_activity, check_energy
from .errors import AnalysisError
from .quality import check_quality


def count(n: int, one: str, many: str) -> str:
    return f"{n} {one if n == 1 else many}"


def samples(summary: Any, expected: int, name: str, field: str, what: str = "repetitions is") -> None:
    if summary is not None and len(summary["samples"]) != expected:
        raise AnalysisError(f"{count(len(summary['samples']), 'sample', 'samples')}, but {what} {expected}", name,
                            f"{field}.samples")


def _entries(items: list[Any], expected: int, what: str, ok: bool, name: str, field: str) -> None:
    """``expected`` entries; a failed record may have measured nothing, and then the array is empty."""
    if len(items) != expected and (ok or items):
        raise AnalysisError(f"{count(len(items), 'entry', 'entries')}, but {what} is {expected}", name, field)


def mix_name(tenants: list[dict[str, Any]]) -> str:
    """The mix's name as its writer gives it from its tenants: ``matmul/fp32/4096:4,inference/fp16/8:4``."""
    return ",".join(f"{t['kernel']}/{t['precision']}/{t['size']}:{t['ranks_per_gpu']}" for t in tenants)


def _common(r: dict[str, Any], instances: str, name: str, where: str) -> None:
    ok, n = r["status"] == "ok", r["repetitions"]
    _entries(r[instances], r["active_ranks"], "active_ranks", ok, name, f"{where}.{instances}")
    _entries(r["window_s"], n, "repetitions", ok, name, f"{where}.window_s")
    if r["active_ranks"] != r["ranks_per_gpu"] * r["devices"]:
        raise AnalysisError(f"{r['active_ranks']}, but ranks_per_gpu x devices is {r['ranks_per_gpu']} x "
                            f"{r['devices']} = {r['ranks_per_gpu'] * r['devices']}", name, f"{where}.active_ranks")
    mode = modes.mode(r["mode"])
    expected = mode.expects_mps_client if mode else None
    for j, instance in enumerate(r[instances]):
        if expected is not None and isinstance(instance["mps_enabled"], bool) and instance["mps_enabled"] != expected:
            raise AnalysisError(f"{str(instance['mps_enabled']).lower()}, but mode {r['mode']} runs "
                                f"{'MPS clients' if expected else 'no MPS client'}", name,
                                f"{where}.{instances}[{j}].mps_enabled")
    needed = ("work_per_iteration", "aggregate") if instances == "ranks" else ("aggregate",)
    for key in needed if r["window_s"] else ():
        if r[key] is None:
            raise AnalysisError(f"null, but window_s holds {len(r['window_s'])} measured repetitions", name,
                                f"{where}.{key}")
    for key, summary in (r["aggregate"] or {}).items():
        if isinstance(summary, dict):
            samples(summary, n, name, f"{where}.aggregate.{key}")


def _kernel_shape(r: dict[str, Any], name: str, where: str) -> None:
    for j, rank in enumerate(r["ranks"]):
        for key in ("iteration_time_s", "gpu_iteration_time_s", "collective_time_s"):
            samples(rank.get(key), r["repetitions"], name, f"{where}.ranks[{j}].{key}")
    if r.get("collective") is not None:
        timed = sum(rank.get("collective_time_s") is not None for rank in r["ranks"])
        per_iteration = r["collective"]["time_per_iteration_s"]
        if r["ranks"] and len(per_iteration["samples"]) != timed:
            raise AnalysisError(f"{count(len(per_iteration['samples']), 'sample', 'samples')}, but "
                                f"{count(timed, 'rank has', 'ranks have')} a collective_time_s", name,
                                f"{where}.collective.time_per_iteration_s.samples")
    tenants = r.get("tenants") if kind_of(r) == "mix" else None
    if not tenants:  # not a mix, or a failed mix's [] (the schema requires two or more tenants of an ok one)
        for j, rank in enumerate(r["ranks"]):
            if rank.get("tenant") is not None:
                raise AnalysisError(f"{rank['tenant']}, but the record has no tenants", name,
                                    f"{where}.ranks[{j}].tenant")
        return
    if r["precision"] != mix_name(tenants):
        raise AnalysisError(f"{r['precision']!r} names the mix, but its tenants are {mix_name(tenants)!r}", name,
                            f"{where}.precision")
    total = sum(t["ranks_per_gpu"] for t in tenants)
    if total != r["ranks_per_gpu"]:
        raise AnalysisError(f"{r['ranks_per_gpu']}, but its tenants' ranks_per_gpu add up to {total}", name,
                            f"{where}.ranks_per_gpu")
    members = [0] * len(tenants)
    for j, rank in enumerate(r["ranks"]):
        index = rank.get("tenant")
        if index is None or not 0 <= index < len(tenants):
            raise AnalysisError(f"{show(index)}, but a rank of a mix names one of its {len(tenants)} tenants "
                                f"(0 to {len(tenants) - 1})", name, f"{where}.ranks[{j}].tenant")
        members[index] += 1
    for i, t in enumerate(tenants):
        if r["ranks"] and members[i] != t["ranks_per_gpu"] * r["devices"]:
            raise AnalysisError(f"{t['ranks_per_gpu']} ranks per GPU on {r['devices']} device(s), but {members[i]} "
                                f"of the record's ranks name this tenant ({t['ranks_per_gpu'] * r['devices']} "
                                "expected)", name, f"{where}.tenants[{i}].ranks_per_gpu")
        samples(t["throughput"], r["repetitions"], name, f"{where}.tenants[{i}].throughput")


def _app_shape(r: dict[str, Any], name: str, where: str) -> None:
    app, runs = r["app"], r["app"]["runs_per_repetition"]
    if (runs or r["window_s"]) and len(runs) != len(r["window_s"]):
        raise AnalysisError(f"{len(runs)} entries, but window_s has {len(r['window_s'])}", name,
                            f"{where}.app.runs_per_repetition")
    share = app.get("startup_share")
    if share is not None and not (number(share) and 0 <= share <= 1):
        raise AnalysisError(f"expected a share in [0, 1] or null, got {show(share)}", name, f"{where}.app.startup_share")
    seen: dict[int, int] = {}
    for j, c in enumerate(r["copies"]):
        at_ = f"{where}.copies[{j}]"
        if c["copy"] >= r["active_ranks"] or c["copy"] in seen:
            why = f"also copies[{seen[c['copy']]}]'s" if c["copy"] in seen else f"not below active_ranks {r['active_ranks']}"
            raise AnalysisError(f"{c['copy']}, {why}", name, f"{at_}.copy")
        seen[c["copy"]] = j
        for key in ("run_time_s", "metric_per_s", "startup_s"):
            summary = c.get(key)
            if summary is not None and (not isinstance(summary, dict) or not isinstance(summary.get("samples"), list)):
                raise AnalysisError(f"expected a summary or null, got {show(summary)}", name, f"{at_}.{key}")
            samples(summary, r["repetitions"], name, f"{at_}.{key}")
    if r["primary_metric"] == METRIC and r["aggregate"] is not None and METRIC not in r["aggregate"]:
        raise AnalysisError("required field is missing (the primary metric)", name, f"{where}.aggregate.{METRIC}")


def shape(r: dict[str, Any], name: str, where: str) -> None:
    """The rules the derivations rely on (module doc)."""
    app = kind_of(r) == "app"
    _common(r, "copies" if app else "ranks", name, where)
    _app_shape(r, name, where) if app else _kernel_shape(r, name, where)
    if not app:
        check_quality(r, name, where)
    check_energy(r, name, where)
    check_activity(r, name, where)


def _latency_order(stats: dict[str, Any], name: str, where: str, order: tuple[str, ...] = ("p50", "p95", "p99", "max"),
                   slack: float = 1e-6) -> None:
    """Each figure at most the next (within the writers' summing slack), and a mean at most the max."""
    pairs = list(zip(order, order[1:])) + ([("mean", "max")] if "mean" in stats else [])
    for lower, upper in pairs:
        if stats[lower] > stats[upper] * (1 + slack) + 1e-300:
            raise AnalysisError(f"{stats[lower]!r} is above {upper} {stats[upper]!r}", name, f"{where}.{lower}")


def _noise_met(r: dict[str, Any], name: str, where: str) -> None:
    relative, target, met = (at(r, f"noise.{key}") for key in ("relative", "target", "met"))
    if number(relative) and number(target) and \
            isinstance(met, bool) and met != (relative <= target) and at(r, "noise.estimator") == "median_se_normal":
        raise AnalysisError(f"{str(met).lower()}, but relative {relative!r} is "
                            f"{'within' if relative <= target else 'above'} target {target!r}", name, f"{where}.noise.met")


def _app_claims(r: dict[str, Any], name: str, where: str) -> None:
    app, runs, copies = r["app"], r["app"]["runs_per_repetition"], r["copies"]
    if copies and sum(c["runs"] for c in copies) != sum(runs):
        raise AnalysisError(f"the copies' runs add up to {sum(c['runs'] for c in copies)}, but "
                            f"app.runs_per_repetition to {sum(runs)}", name, f"{where}.copies")
    if app["run_time_s"] is not None:
        _latency_order(app["run_time_s"], name, f"{where}.app.run_time_s", ("min", "median", "p95", "max"), 0.0)
        if not sum(runs):
            raise AnalysisError("present, but no run was counted (app.runs_per_repetition)", name,
                                f"{where}.app.run_time_s")
    elif r["status"] == "ok" and sum(runs):
        raise AnalysisError(f"null, but {sum(runs)} runs were counted", name, f"{where}.app.run_time_s")
    for j, c in enumerate(copies):
        check, at_ = c["check"], f"{where}.copies[{j}].check"
        if check["failed_runs"] > check["checked_runs"]:
            raise AnalysisError(f"{check['failed_runs']}, but only {check['checked_runs']} runs were checked", name,
                                f"{at_}.failed_runs")
        if check["ok"] != (check["failed_runs"] == 0):
            raise AnalysisError(f"{str(check['ok']).lower()}, but {check['failed_runs']} checked runs failed", name,
                                f"{at_}.ok")
        if app["check"] is None and check["checked_runs"]:
            raise AnalysisError(f"{check['checked_runs']}, but the application has no check (app.check is null)",
                                name, f"{at_}.checked_runs")
    for j, run in enumerate(app["failed_runs"]):
        copy = run.get("copy")
        if number(copy) and not 0 <= copy < r["active_ranks"]:
            raise AnalysisError(f"{copy}, but the copies are 0 to {r['active_ranks'] - 1}", name,
                                f"{where}.app.failed_runs[{j}].copy")
    failed = app["failed_checks"]
    if failed and app["check"] is None:
        raise AnalysisError(f"{len(failed)} entries, but the application has no check (app.check is null)", name,
                            f"{where}.app.failed_checks")
    failing = [j for j, c in enumerate(copies) if not c["check"]["ok"]]
    if r["verified"] and failed:
        raise AnalysisError(f"true, but app.failed_checks lists {len(failed)} failed --app-check run(s)", name,
                            f"{where}.verified")
    if r["verified"] and failing:
        raise AnalysisError(f"true, but copies[{failing[0]}].check.ok is false", name, f"{where}.verified")
    if not r["verified"] and r["status"] == "ok" and not failed:
        raise AnalysisError("false, but app.failed_checks lists no failed --app-check run", name, f"{where}.verified")


def claims(r: dict[str, Any], name: str, where: str) -> None:
    """The flags and orders a record claims (module doc)."""
    _noise_met(r, name, where)
    if kind_of(r) == "app":
        _app_claims(r, name, where)
        return
    # only this direction: a record may fail verification on more than its ranks show, never pass it while
    # one of its ranks failed
    failing = [j for j, rank in enumerate(r["ranks"]) if not rank["verification"]["ok"]]
    if r["verified"] and failing:
        raise AnalysisError(f"true, but ranks[{failing[0]}].verification.ok is false", name, f"{where}.verified")
    for path in ([f"ranks[{j}].latency_s" for j in range(len(r["ranks"]))] + ["latency.overall"] +
                 [f"tenants[{i}].latency.overall" for i in range(len(r.get("tenants") or []))]):
        stats = at(r, path)
        if isinstance(stats, dict):
            _latency_order(stats, name, f"{where}.{path}")
    if r.get("collective") is not None and r["verified"] and not r["collective"]["ok"]:
        raise AnalysisError("true, but collective.ok is false", name, f"{where}.verified")
