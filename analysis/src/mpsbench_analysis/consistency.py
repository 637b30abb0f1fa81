"""Checks between fields of a result that the JSON Schema cannot express.

A record holds one entry per active instance in ``ranks`` and one entry per
repetition in ``window_s`` and in every summary's ``samples``; a summary's
median, min and max are computed from its samples (harness/result.cpp,
harness/stats.cpp).  Each aggregate sample is the total work over its window,
``active_ranks × iterations_per_repetition × work_per_iteration.X /
window_s[i]`` (0 for an empty window), computed in that order, so a reader
gets the writer's double back; kernel app has no iterations, and its
``item_per_s`` samples are ``app.runs_per_repetition[i] / window_s[i]``
(its FLOP/s and byte/s 0).  ``aggregate_cv`` is the CV of
the primary samples, ``jain_fairness`` Jain's index over the ranks'
``throughput_per_s``, and ``verified`` is not true while a rank failed its
verification (the CI gate relies on it).  The optional ``noise``,
``warmup`` and ``clocks`` of newer files are checked by quality.py: types
and ranges (the schema copy may not know them), ``clocks.repetition_affected``
with one entry per repetition and ``clocks.affected_repetitions`` its count
of true.

Schema version 2 adds (each checked where present): a latency object's
percentiles in order (p50 <= p95 <= p99 <= max, mean <= max) and its
``count`` the sum of the ranks' ``latency_s.count``; the collective's
``time_per_iteration_s`` with one sample per rank that timed it, each rank's
``collective_time_s`` one per repetition, ``fraction_of_iteration`` its
median over the median of those ranks' iteration times, and ``verified`` not
true while ``collective.ok`` is false; and a mix record's tenants: their
``ranks_per_gpu`` summing to the record's, every rank naming one of them in
``tenant`` (and no rank of another record naming any), each tenant's
throughput summary with one sample per repetition, its ``slowdown`` =
``alone_throughput / throughput.median`` and ``latency_p99_ratio`` =
``latency.overall.p99 / alone_latency_p99_s``.  A mix's aggregate adds its
tenants' work at their own iteration counts, which the file does not hold,
so its aggregate samples are not recomputed, and its ``jain_fairness`` (1:
the tenants' ranks do different work) is not either.

A file where these disagree was edited or corrupted, and analysing it would
put numbers on the screen that no run measured, or let a CI gate pass on
them.  A failed record may leave its measured fields empty (mpsbench does);
what it does fill in must agree like an ok one's.
"""

from __future__ import annotations

import math
from typing import Any

from .errors import AnalysisError

#: The kernel of a mix record (loader.MIX_KERNEL; loader imports this module).
MIX_KERNEL = "mix"
from .quality import check_quality, check_settings
from mpsbench_core.stats import coefficient_of_variation, median

#: The writers copy doubles exactly; this only absorbs a reader that does not.
_REL_TOL = 1e-9
#: For figures the writer sums in another order than we do (and the schema's
#: own slack on jain_fairness's maximum).
_SUM_TOL = 1e-6

#: aggregate key -> its work_per_iteration key (the schema requires each).
_AGGREGATES = {"flop_per_s": "flop", "byte_per_s": "byte", "item_per_s": "items"}
_NEEDED_BY_MEASUREMENTS = ("work_per_iteration", "aggregate")


def _count(n: int, one: str, many: str) -> str:
    return f"{n} {one if n == 1 else many}"


def _check_summary(summary: dict[str, Any], repetitions: int, name: str, field: str) -> None:
    samples = summary["samples"]
    if len(samples) != repetitions:
        raise AnalysisError(f"{_count(len(samples), 'sample', 'samples')}, but repetitions is {repetitions}",
                            name, f"{field}.samples")
    for key, expected in (("median", median(samples)), ("min", min(samples)), ("max", max(samples))):
        if not math.isclose(summary[key], expected, rel_tol=_REL_TOL):
            raise AnalysisError(f"{summary[key]!r} disagrees with its samples, whose {key} is {expected!r}",
                                name, f"{field}.{key}")


def _expected_rates(r: dict[str, Any], name: str, where: str) -> list[tuple[str, str, list[float]]]:
    """(aggregate key, how its samples are made, the samples) for a record with windows."""
    windows = r["window_s"]

    def over_windows(work: list[float]) -> list[float]:
        return [total / w if w > 0 else 0.0 for total, w in zip(work, windows)]

    if r["iterations_per_repetition"] is not None:
        done = float(r["iterations_per_repetition"]) * r["active_ranks"]
        return [(key, f"active_ranks x iterations_per_repetition x work_per_iteration.{work} / window_s[i]",
                 over_windows([done * r["work_per_iteration"][work]] * len(windows)))
                for key, work in _AGGREGATES.items()]
    if r["kernel"] != "app":
        return []
    runs = r["app"]["runs_per_repetition"]  # kernel app counts runs, it has no iterations
    if len(runs) != len(windows):
        raise AnalysisError(f"{_count(len(runs), 'entry', 'entries')}, but window_s has {len(windows)}",
                            name, f"{where}.app.runs_per_repetition")
    zeros = [0.0] * len(windows)
    return [("item_per_s", "app.runs_per_repetition[i] / window_s[i]", over_windows([float(n) for n in runs])),
            ("flop_per_s", "0 for kernel app", zeros), ("byte_per_s", "0 for kernel app", zeros)]


def _check_rates(r: dict[str, Any], name: str, where: str) -> None:
    if r["kernel"] == MIX_KERNEL:  # its tenants' own iteration counts are not in the file
        return
    for key, formula, expected in _expected_rates(r, name, where):
        for i, (sample, want) in enumerate(zip(r["aggregate"][key]["samples"], expected)):
            if not math.isclose(sample, want, rel_tol=_REL_TOL):
                raise AnalysisError(f"{sample!r} disagrees with {formula.replace('[i]', f'[{i}]')} = {want!r}",
                                    name, f"{where}.aggregate.{key}.samples[{i}]")


def _jain_index(values: list[float]) -> float:
    """(sum x)^2 / (n sum x^2), 1 when every value is 0 (as harness/stats.cpp)."""
    squares = math.fsum(v * v for v in values)
    return 1.0 if squares == 0 else math.fsum(values) ** 2 / (len(values) * squares)


def _check_derived(r: dict[str, Any], name: str, where: str) -> None:
    if r["aggregate_cv"] is not None and r["aggregate"] is not None:
        cv = coefficient_of_variation(r["aggregate"][r["primary_metric"]]["samples"])
        if not math.isclose(r["aggregate_cv"], cv, rel_tol=_SUM_TOL, abs_tol=1e-12):
            raise AnalysisError(f"{r['aggregate_cv']!r} disagrees with the CV of aggregate.{r['primary_metric']}"
                                f".samples, {cv!r}", name, f"{where}.aggregate_cv")
    if not r["ranks"]:
        return
    if r["jain_fairness"] is not None and r["kernel"] != MIX_KERNEL:
        jain = _jain_index([rank["throughput_per_s"] for rank in r["ranks"]])
        if not math.isclose(r["jain_fairness"], jain, rel_tol=_SUM_TOL):
            raise AnalysisError(f"{r['jain_fairness']!r} disagrees with Jain's index over "
                                f"ranks[].throughput_per_s, {jain!r}", name, f"{where}.jain_fairness")
    # only this direction: a record may fail verification on more than its ranks show (an
    # application's warm-up runs), but never pass it while one of its ranks failed
    failing = [j for j, rank in enumerate(r["ranks"]) if not rank["verification"]["ok"]]
    if r["verified"] and failing:
        raise AnalysisError(f"true, but ranks[{failing[0]}].verification.ok is false", name, f"{where}.verified")


def _check_count(items: list[Any], expected: int, what: str, ok: bool, name: str, field: str) -> None:
    # a failed record may have measured nothing; then the array is empty
    if len(items) != expected and (ok or items):
        raise AnalysisError(f"{_count(len(items), 'entry', 'entries')}, but {what} is {expected}", name, field)


def check_result(r: dict[str, Any], name: str, where: str) -> None:
    """Raises AnalysisError on the first disagreement inside one schema-valid result."""
    ok = r["status"] == "ok"
    repetitions = r["repetitions"]
    _check_count(r["ranks"], r["active_ranks"], "active_ranks", ok, name, f"{where}.ranks")
    _check_count(r["window_s"], repetitions, "repetitions", ok, name, f"{where}.window_s")
    if r["window_s"]:
        for key in _NEEDED_BY_MEASUREMENTS:
            if r[key] is None:
                raise AnalysisError(f"null, but window_s holds {len(r['window_s'])} measured repetitions",
                                    name, f"{where}.{key}")
    if r["aggregate"] is not None:
        for key in _AGGREGATES:
            _check_summary(r["aggregate"][key], repetitions, name, f"{where}.aggregate.{key}")
    if r["window_s"]:
        _check_rates(r, name, where)
    _check_derived(r, name, where)
    for j, rank in enumerate(r["ranks"]):
        _check_summary(rank["iteration_time_s"], repetitions, name, f"{where}.ranks[{j}].iteration_time_s")
        if rank["gpu_iteration_time_s"] is not None:
            _check_summary(rank["gpu_iteration_time_s"], repetitions, name,
                           f"{where}.ranks[{j}].gpu_iteration_time_s")
        if rank.get("latency_s") is not None:
            _check_latency_stats(rank["latency_s"], name, f"{where}.ranks[{j}].latency_s")
        if rank.get("collective_time_s") is not None:
            _check_summary(rank["collective_time_s"], repetitions, name, f"{where}.ranks[{j}].collective_time_s")
    if r.get("latency") is not None:
        _check_latency(r["latency"], r["ranks"], name, f"{where}.latency")
    if r.get("collective") is not None:
        _check_collective(r, name, where)
    _check_tenants(r, name, where)
    check_quality(r, name, where)


def _close(a: float, b: float) -> bool:
    return math.isclose(a, b, rel_tol=_SUM_TOL, abs_tol=1e-300)


def _check_latency_stats(stats: dict[str, Any], name: str, where: str) -> None:
    """p50 <= p95 <= p99 <= max and mean <= max (the percentiles of one set of requests)."""
    order = ["p50", "p95", "p99", "max"]
    for lower, upper in zip(order, order[1:]):
        if stats[lower] > stats[upper] and not _close(stats[lower], stats[upper]):
            raise AnalysisError(f"{stats[lower]!r} is above {upper} {stats[upper]!r}", name, f"{where}.{lower}")
    if stats["mean"] > stats["max"] and not _close(stats["mean"], stats["max"]):
        raise AnalysisError(f"{stats['mean']!r} is above max {stats['max']!r}", name, f"{where}.mean")


def _check_latency(latency: dict[str, Any], ranks: list[dict[str, Any]], name: str, where: str) -> None:
    """``overall``'s figures in order, and its count that of every request of the ranks."""
    overall = latency["overall"]
    _check_latency_stats(overall, name, f"{where}.overall")
    counts = [rank["latency_s"]["count"] for rank in ranks if rank.get("latency_s") is not None]
    if ranks and len(counts) == len(ranks) and overall["count"] != sum(counts):
        raise AnalysisError(f"{overall['count']}, but the ranks' latency_s.count add up to {sum(counts)}", name,
                            f"{where}.overall.count")


def _check_collective(r: dict[str, Any], name: str, where: str) -> None:
    c = r["collective"]
    timed = [rank for rank in r["ranks"] if rank.get("collective_time_s") is not None]
    per_iteration = c["time_per_iteration_s"]
    _check_summary(per_iteration, len(per_iteration["samples"]), name, f"{where}.collective.time_per_iteration_s")
    if r["ranks"] and len(per_iteration["samples"]) != len(timed):
        raise AnalysisError(f"{_count(len(per_iteration['samples']), 'sample', 'samples')}, but "
                            f"{_count(len(timed), 'rank has', 'ranks have')} a collective_time_s", name,
                            f"{where}.collective.time_per_iteration_s.samples")
    if timed:
        iteration = median([rank["iteration_time_s"]["median"] for rank in timed])
        expected = per_iteration["median"] / iteration if iteration > 0 else 0.0
        if not math.isclose(c["fraction_of_iteration"], expected, rel_tol=_SUM_TOL, abs_tol=1e-12):
            raise AnalysisError(f"{c['fraction_of_iteration']!r} disagrees with time_per_iteration_s.median / the "
                                f"median of the ranks' iteration_time_s.median, {expected!r}", name,
                                f"{where}.collective.fraction_of_iteration")
    if r["verified"] and not c["ok"]:
        raise AnalysisError("true, but collective.ok is false", name, f"{where}.verified")


def _check_tenants(r: dict[str, Any], name: str, where: str) -> None:
    tenants = r.get("tenants")
    if not tenants:  # null (not a mix, or a version-1 file) or a failed mix's []
        for j, rank in enumerate(r["ranks"]):
            if rank.get("tenant") is not None:
                raise AnalysisError(f"{rank['tenant']}, but the record has no tenants", name,
                                    f"{where}.ranks[{j}].tenant")
        return
    total = sum(t["ranks_per_gpu"] for t in tenants)
    if total != r["ranks_per_gpu"]:
        raise AnalysisError(f"{r['ranks_per_gpu']}, but its tenants' ranks_per_gpu add up to {total}", name,
                            f"{where}.ranks_per_gpu")
    for j, rank in enumerate(r["ranks"]):
        index = rank.get("tenant")
        if index is None or not 0 <= index < len(tenants):
            raise AnalysisError(f"{_short(index)}, but a rank of a mix names one of its "
                                f"{len(tenants)} tenants (0 to {len(tenants) - 1})", name,
                                f"{where}.ranks[{j}].tenant")
    for i, t in enumerate(tenants):
        at = f"{where}.tenants[{i}]"
        _check_summary(t["throughput"], r["repetitions"], name, f"{at}.throughput")
        if t["latency"] is not None:
            members = [rank for rank in r["ranks"] if rank.get("tenant") == i]
            _check_latency(t["latency"], members, name, f"{at}.latency")
        shared = t["throughput"]["median"]
        if t["slowdown"] is not None and t["alone_throughput"] is not None and shared > 0:
            if not _close(t["slowdown"], t["alone_throughput"] / shared):
                raise AnalysisError(f"{t['slowdown']!r} disagrees with alone_throughput / throughput.median = "
                                    f"{t['alone_throughput'] / shared!r}", name, f"{at}.slowdown")
        alone_p99 = t["alone_latency_p99_s"]
        if t["latency_p99_ratio"] is not None and t["latency"] is not None and alone_p99:
            expected = t["latency"]["overall"]["p99"] / alone_p99
            if not _close(t["latency_p99_ratio"], expected):
                raise AnalysisError(f"{t['latency_p99_ratio']!r} disagrees with latency.overall.p99 / "
                                    f"alone_latency_p99_s = {expected!r}", name, f"{at}.latency_p99_ratio")


def _short(value: Any) -> str:
    return "null" if value is None else repr(value)


def check_consistency(doc: dict[str, Any], name: str) -> None:
    """Every result of a schema-valid document (see the module doc), and the run's noise target."""
    check_settings(doc["context"], name)
    for i, r in enumerate(doc["results"]):
        check_result(r, name, f"results[{i}]")
