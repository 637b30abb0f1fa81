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

A file where these disagree was edited or corrupted, and analysing it would
put numbers on the screen that no run measured, or let a CI gate pass on
them.  A failed record may leave its measured fields empty (mpsbench does);
what it does fill in must agree like an ok one's.
"""

from __future__ import annotations

import math
from typing import Any

from .errors import AnalysisError
from .quality import check_quality, check_settings
from .stats import coefficient_of_variation, median

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
    if r["jain_fairness"] is not None:
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
    check_quality(r, name, where)


def check_consistency(doc: dict[str, Any], name: str) -> None:
    """Every result of a schema-valid document (see the module doc), and the run's noise target."""
    check_settings(doc["context"], name)
    for i, r in enumerate(doc["results"]):
        check_result(r, name, f"results[{i}]")
