"""The rules of a record that are no derivation (derived.py re-derives its figures); analysis/README.md lists them.

:func:`shape` runs before the derivations, so that what they derive from has its shape: counts (one entry per
instance and per repetition), measured objects present, each instance's MPS flag its mode's (core modes), a mix's
tenants its name's and its ranks shared out as they say, an application's copy indices (the types of the
optional objects: energy_rules.py, quality.py).  :func:`claims` runs after them: ``verified`` never true while a
rank, the collective or a copy's check failed (the CI gate relies on it), a copy's check ``ok`` exactly when
none of its runs failed, ``noise.met``, the copies' runs adding up, percentiles in order.  A failed record may
leave its measured fields empty (the writers do); what it does fill in must agree.
"""

from __future__ import annotations

from typing import Any, Iterator

from mpsbench_core import modes
from mpsbench_core.records import kind_of

from .derived import METRIC, MISSING, SUMMARIES, at, fields_of, number, show

#: A rule's refusals, (the field below the record, why): the caller raises the first, and a rule after a refusal
#: relies on none of what it refused (consistency.py).
Refusals = Iterator[tuple[str, str]]


def count(n: int, one: str, many: str) -> str:
    return f"{n} {one if n == 1 else many}"


def samples(summary: Any, expected: int, field: str) -> Refusals:
    if summary is not None and len(summary["samples"]) != expected:
        n = len(summary["samples"])
        yield f"{field}.samples", f"{count(n, 'sample', 'samples')}, but repetitions is {expected}"


def _entries(items: list[Any], expected: int, what: str, ok: bool, field: str) -> Refusals:
    """``expected`` entries; a failed record may have measured nothing, and then the array is empty."""
    if len(items) != expected and (ok or items):
        yield field, f"{count(len(items), 'entry', 'entries')}, but {what} is {expected}"


def mix_name(tenants: list[dict[str, Any]]) -> str:
    """The mix's name as its writer gives it from its tenants: ``matmul/fp32/4096:4,inference/fp16/8:4``."""
    return ",".join(f"{t['kernel']}/{t['precision']}/{t['size']}:{t['ranks_per_gpu']}" for t in tenants)


def _common(r: dict[str, Any], instances: str) -> Refusals:
    ok, n = r["status"] == "ok", r["repetitions"]
    yield from _entries(r[instances], r["active_ranks"], "active_ranks", ok, instances)
    yield from _entries(r["window_s"], n, "repetitions", ok, "window_s")
    if r["active_ranks"] != r["ranks_per_gpu"] * r["devices"]:
        yield "active_ranks", (f"{r['active_ranks']}, but ranks_per_gpu x devices is {r['ranks_per_gpu']} x "
                               f"{r['devices']} = {r['ranks_per_gpu'] * r['devices']}")
    mode = modes.mode(r["mode"])
    expected = mode.expects_mps_client if mode else None
    for j, instance in enumerate(r[instances]):
        if expected is not None and isinstance(instance["mps_enabled"], bool) and instance["mps_enabled"] != expected:
            yield f"{instances}[{j}].mps_enabled", (f"{str(instance['mps_enabled']).lower()}, but mode {r['mode']} "
                                                    f"runs {'MPS clients' if expected else 'no MPS client'}")
    needed = ("work_per_iteration", "aggregate") if instances == "ranks" else ("aggregate",)
    for key in needed if r["window_s"] else ():
        if r[key] is None:
            yield key, f"null, but window_s holds {len(r['window_s'])} measured repetitions"
    yield from _summaries(r)


def _summaries(r: dict[str, Any]) -> Refusals:
    """Each summary of repetitions (derived.SUMMARIES but the collective's, of a sample per timed rank) a summary
    or null, of a sample per repetition."""
    for prefix in (p for p in SUMMARIES if not p.startswith("collective.")):
        for path in (prefix.format(**ix) for ix in fields_of(prefix, r)):
            summary = at(r, path)
            if summary is MISSING or summary is None:
                continue
            if not isinstance(summary, dict) or not isinstance(summary.get("samples"), list):
                yield path, f"expected a summary or null, got {show(summary)}"
            yield from samples(summary, r["repetitions"], path)


def _kernel_shape(r: dict[str, Any]) -> Refusals:
    if r.get("collective") is not None and r["ranks"]:
        timed = sum(rank.get("collective_time_s") is not None for rank in r["ranks"])
        n = len(r["collective"]["time_per_iteration_s"]["samples"])
        if n != timed:
            yield "collective.time_per_iteration_s.samples", (
                f"{count(n, 'sample', 'samples')}, but {count(timed, 'rank has', 'ranks have')} a collective_time_s")
    tenants = r.get("tenants") if kind_of(r) == "mix" else None
    if not tenants:  # not a mix, or a failed mix's [] (the schema requires two or more tenants of an ok one)
        for j, rank in enumerate(r["ranks"]):
            if rank.get("tenant") is not None:
                yield f"ranks[{j}].tenant", f"{rank['tenant']}, but the record has no tenants"
        return
    if r["precision"] != mix_name(tenants):
        yield "precision", f"{r['precision']!r} names the mix, but its tenants are {mix_name(tenants)!r}"
    total = sum(t["ranks_per_gpu"] for t in tenants)
    if total != r["ranks_per_gpu"]:
        yield "ranks_per_gpu", f"{r['ranks_per_gpu']}, but its tenants' ranks_per_gpu add up to {total}"
    members = [0] * len(tenants)
    for j, rank in enumerate(r["ranks"]):
        index = rank.get("tenant")
        if index is None or not 0 <= index < len(tenants):
            yield f"ranks[{j}].tenant", (f"{show(index)}, but a rank of a mix names one of its {len(tenants)} "
                                         f"tenants (0 to {len(tenants) - 1})")
        members[index] += 1
    for i, t in enumerate(tenants):
        if r["ranks"] and members[i] != t["ranks_per_gpu"] * r["devices"]:
            yield f"tenants[{i}].ranks_per_gpu", (
                f"{t['ranks_per_gpu']} ranks per GPU on {r['devices']} device(s), but {members[i]} of the "
                f"record's ranks name this tenant ({t['ranks_per_gpu'] * r['devices']} expected)")


def _app_shape(r: dict[str, Any]) -> Refusals:
    app, runs = r["app"], r["app"]["runs_per_repetition"]
    if (runs or r["window_s"]) and len(runs) != len(r["window_s"]):
        yield "app.runs_per_repetition", f"{len(runs)} entries, but window_s has {len(r['window_s'])}"
    share = app.get("startup_share")
    if share is not None and not (number(share) and 0 <= share <= 1):
        yield "app.startup_share", f"expected a share in [0, 1] or null, got {show(share)}"
    seen: dict[int, int] = {}
    for j, c in enumerate(r["copies"]):
        if c["copy"] >= r["active_ranks"] or c["copy"] in seen:
            why = f"also copies[{seen[c['copy']]}]'s" if c["copy"] in seen else \
                f"not below active_ranks {r['active_ranks']}"
            yield f"copies[{j}].copy", f"{c['copy']}, {why}"
        seen[c["copy"]] = j
    if r["primary_metric"] == METRIC and r["aggregate"] is not None and METRIC not in r["aggregate"]:
        yield f"aggregate.{METRIC}", "required field is missing (the primary metric)"


def shape(r: dict[str, Any]) -> Refusals:
    """The rules the derivations rely on (module doc) but those of the optional objects (consistency.py runs
    quality.py's and energy_rules.py's after them)."""
    app = kind_of(r) == "app"
    yield from _common(r, "copies" if app else "ranks")
    yield from _app_shape(r) if app else _kernel_shape(r)


def _latency_order(stats: dict[str, Any], field: str, order: tuple[str, ...] = ("p50", "p95", "p99", "max"),
                   slack: float = 1e-6) -> Refusals:
    """Each figure at most the next (within the writers' summing slack), and a mean at most the max."""
    pairs = list(zip(order, order[1:])) + ([("mean", "max")] if "mean" in stats else [])
    for lower, upper in pairs:
        if stats[lower] > stats[upper] * (1 + slack) + 1e-300:
            yield f"{field}.{lower}", f"{stats[lower]!r} is above {upper} {stats[upper]!r}"


def _noise_met(r: dict[str, Any]) -> Refusals:
    relative, target, met = (at(r, f"noise.{key}") for key in ("relative", "target", "met"))
    if number(relative) and number(target) and \
            isinstance(met, bool) and met != (relative <= target) and at(r, "noise.estimator") == "median_se_normal":
        yield "noise.met", (f"{str(met).lower()}, but relative {relative!r} is "
                            f"{'within' if relative <= target else 'above'} target {target!r}")


def _app_claims(r: dict[str, Any]) -> Refusals:
    app, runs, copies = r["app"], r["app"]["runs_per_repetition"], r["copies"]
    if copies and sum(c["runs"] for c in copies) != sum(runs):
        yield "copies", (f"the copies' runs add up to {sum(c['runs'] for c in copies)}, but "
                         f"app.runs_per_repetition to {sum(runs)}")
    if app["run_time_s"] is not None:
        yield from _latency_order(app["run_time_s"], "app.run_time_s", ("min", "median", "p95", "max"), 0.0)
        if not sum(runs):
            yield "app.run_time_s", "present, but no run was counted (app.runs_per_repetition)"
    elif r["status"] == "ok" and sum(runs):
        yield "app.run_time_s", f"null, but {sum(runs)} runs were counted"
    for j, c in enumerate(copies):
        check, at_ = c["check"], f"copies[{j}].check"
        if check["failed_runs"] > check["checked_runs"]:
            yield f"{at_}.failed_runs", f"{check['failed_runs']}, but only {check['checked_runs']} runs were checked"
        if check["ok"] != (check["failed_runs"] == 0):
            yield f"{at_}.ok", f"{str(check['ok']).lower()}, but {check['failed_runs']} checked runs failed"
        if app["check"] is None and check["checked_runs"]:
            yield f"{at_}.checked_runs", (f"{check['checked_runs']}, but the application has no check "
                                          "(app.check is null)")
    for j, run in enumerate(app["failed_runs"]):
        copy = run.get("copy")
        if number(copy) and not 0 <= copy < r["active_ranks"]:
            yield f"app.failed_runs[{j}].copy", f"{copy}, but the copies are 0 to {r['active_ranks'] - 1}"
    failed = app["failed_checks"]
    if failed and app["check"] is None:
        yield "app.failed_checks", f"{len(failed)} entries, but the application has no check (app.check is null)"
    failing = [j for j, c in enumerate(copies) if not c["check"]["ok"]]
    if r["verified"] and failed:
        yield "verified", f"true, but app.failed_checks lists {len(failed)} failed --app-check run(s)"
    if r["verified"] and failing:
        yield "verified", f"true, but copies[{failing[0]}].check.ok is false"
    if not r["verified"] and r["status"] == "ok" and not failed:
        yield "verified", "false, but app.failed_checks lists no failed --app-check run"


def claims(r: dict[str, Any]) -> Refusals:
    """The flags and orders a record claims (module doc)."""
    yield from _noise_met(r)
    if kind_of(r) == "app":
        yield from _app_claims(r)
        return
    # only this direction: a record may fail verification on more than its ranks show, never pass it while
    # one of its ranks failed
    failing = [j for j, rank in enumerate(r["ranks"]) if not rank["verification"]["ok"]]
    if r["verified"] and failing:
        yield "verified", f"true, but ranks[{failing[0]}].verification.ok is false"
    for path in ([f"ranks[{j}].latency_s" for j in range(len(r["ranks"]))] + ["latency.overall"] +
                 [f"tenants[{i}].latency.overall" for i in range(len(r.get("tenants") or []))]):
        stats = at(r, path)
        if isinstance(stats, dict):
            yield from _latency_order(stats, path)
    if r.get("collective") is not None and r["verified"] and not r["collective"]["ok"]:
        yield "verified", "true, but collective.ok is false"
