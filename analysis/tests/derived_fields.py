"""Every derived field of a results document, and a change that makes it disagree with what it derives from.

A derived field is one the writer computes from other fields of the same file: a summary from its samples,
an aggregate sample from the work and the window, runs per hour from the median, a speedup from the
one-per-GPU record, a count from an array, a mix's name from its tenants, a verified flag from the checks.
:func:`derived_paths` lists them for the records of every kind and version; :func:`nudged` changes one to
another value of the right type and range (a number x 1.5, or x 0.5 where 1.5 would leave its range; an
integer + 1; a flag turned; a mix name with one count raised), so that only the agreement with the other
fields is wrong.  The analysis must refuse every such file (test_app_mix_fuzz.py).
"""

from __future__ import annotations

import copy
import re
from typing import Any, Iterator

from mpsbench_core.records import kind_of

Path_ = tuple[Any, ...]

#: Fields in [0, 1] that x 1.5 could push out of their schema range rather than out of agreement.
_AT_MOST_ONE = {"jain_fairness"}


def _summary(prefix: Path_, summary: dict[str, Any] | None) -> Iterator[Path_]:
    if not summary:
        return
    for key in ("median", "min", "max"):
        yield prefix + (key,)
    for i in range(len(summary["samples"])):
        yield prefix + ("samples", i)


def _has_one_per_gpu(results: list[dict[str, Any]], r: dict[str, Any]) -> bool:
    """Whether the record a speedup is taken from (same subject and mode at one per GPU, ok) is in the file."""
    def subject(x: dict[str, Any]) -> tuple:
        return (kind_of(x), (x.get("app") or {}).get("name"), x.get("kernel"), x.get("precision"), x.get("size"))
    return any(x["ranks_per_gpu"] == 1 and x["mode"] == r["mode"] and subject(x) == subject(r) and
               x["status"] == "ok" for x in results)


def _common(r: dict[str, Any], results: list[dict[str, Any]], instances: str) -> Iterator[Path_]:
    ok = r["status"] == "ok"
    yield ("active_ranks",)
    if ok and r["aggregate_cv"] is not None:
        yield ("aggregate_cv",)
    if ok and r["jain_fairness"] is not None and kind_of(r) != "mix":
        yield ("jain_fairness",)
    noise = r.get("noise")
    if ok and noise and noise.get("relative"):
        yield ("noise", "relative")
    for key in ("speedup_vs_one_rank_per_gpu", "speedup_vs_one_copy_per_gpu"):
        if r.get(key) is not None and _has_one_per_gpu(results, r):
            yield (key,)
    for j, instance in enumerate(r[instances]):
        if isinstance(instance.get("mps_enabled"), bool) and r["mode"] in ("timeslice", "mps", "mps-qos", "streams"):
            yield (instances, j, "mps_enabled")
    energy, activity = r.get("energy") or {}, r.get("gpu_activity") or {}
    if ok and energy.get("available"):  # issue 27: joules per unit of the work, mean power over the span
        yield from (("energy", key) for key in ("joules_per_unit", "mean_power_w") if energy.get(key))
    if ok and activity.get("available") and len(activity.get("per_gpu") or []) > 1:  # a mean of the GPUs'
        yield from (("gpu_activity", key) for key in ("sm_active", "sm_occupancy") if activity.get(key))


def _app(r: dict[str, Any]) -> Iterator[Path_]:
    if r["status"] != "ok":
        return
    legacy = "copies" not in r
    metric = "item_per_s" if legacy else "run_per_s"
    yield from _summary(("aggregate", metric), r["aggregate"][metric])
    for i in range(len(r["window_s"])):
        yield ("window_s", i)
    yield ("app", "runs_per_hour")
    for i in range(len(r["app"]["runs_per_repetition"])):
        yield ("app", "runs_per_repetition", i)
    if r["app"]["run_time_s"]:
        yield from (("app", "run_time_s", key) for key in ("min", "median", "p95"))
    yield ("verified",)
    if legacy:
        yield ("precision",)
        for j in range(len(r["ranks"])):
            yield ("ranks", j, "kernel_details", "runs")
        return
    for j, c in enumerate(r["copies"]):
        yield from ((("copies", j) + tail) for tail in (("runs",), ("copy",), ("check", "ok"), ("check", "failed_runs")))
        if c["run_time_s"]:
            yield ("copies", j, "run_time_s", "median")


def _kernel(r: dict[str, Any]) -> Iterator[Path_]:
    if r["status"] != "ok":
        return
    mix = kind_of(r) == "mix"
    for key, summary in r["aggregate"].items():
        yield from _summary(("aggregate", key), summary)
    if not mix:  # a mix's aggregate adds its tenants' work at counts the file does not hold
        yield from (("window_s", i) for i in range(len(r["window_s"])))
    if not mix:
        return
    yield ("precision",)
    yield ("ranks_per_gpu",)
    for j in range(len(r["ranks"])):
        yield ("ranks", j, "tenant")
    for i, t in enumerate(r["tenants"]):
        yield ("tenants", i, "ranks_per_gpu")
        yield ("tenants", i, "throughput", "median")
        for key in ("slowdown", "alone_throughput", "latency_p99_ratio", "alone_latency_p99_s"):
            if t[key] is not None:
                yield ("tenants", i, key)


def derived_paths(doc: dict[str, Any]) -> list[Path_]:
    """Every derived field of ``doc`` (module doc), as paths from the document's root."""
    out = []
    results = doc["results"]
    for i, r in enumerate(results):
        app = kind_of(r) == "app"
        instances = "copies" if "copies" in r else "ranks"
        for path in [*_common(r, results, instances), *(_app(r) if app else _kernel(r))]:
            out.append(("results", i) + path)
    return out


def one_of_each(paths: list[Path_]) -> list[Path_]:
    """The first path of each field, whatever its indices (``results[#].copies[#].runs`` once), in order:
    the fields to change when changing every field of every record would take too long."""
    seen: dict[tuple, Path_] = {}
    for path in paths:
        seen.setdefault(tuple("#" if isinstance(part, int) else part for part in path), path)
    return list(seen.values())


def _changed(value: Any, field: Any) -> Any:
    if isinstance(value, bool):
        return not value
    if isinstance(value, int):
        return value + 1
    if isinstance(value, float):
        if value == 0:
            return 0.25
        return value * (0.5 if field in _AT_MOST_ONE else 1.5)
    if isinstance(value, str):  # a mix's name: one tenant's count raised
        return re.sub(r":([0-9]+)", lambda m: f":{int(m.group(1)) + 1}", value, count=1) if ":" in value \
            else value + "-other"
    raise TypeError(f"no change for {value!r}")


def nudged(doc: dict[str, Any], path: Path_) -> dict[str, Any]:
    """A copy of ``doc`` with the field at ``path`` changed so that it disagrees (module doc)."""
    out = copy.deepcopy(doc)
    node = out
    for part in path[:-1]:
        node = node[part]
    node[path[-1]] = _changed(node[path[-1]], path[-1])
    return out
