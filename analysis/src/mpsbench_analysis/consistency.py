"""Checks between fields of a record that the JSON Schema cannot express: every figure the analysis shows
must agree with the data it derives from, or the file is refused with one line.

A file where these disagree was edited or corrupted, and analysing it would put numbers on the screen
that no run measured, let a CI gate pass on them, or let a verdict pick a configuration that failed.  A
failed record may leave its measured fields empty (the writers do); what it does fill in must agree like
an ok one's.  This module checks the kernel records (kind ``kernel``) and what every kind shares, and
hands the rest to mix_consistency.py (tenants), app_consistency.py (applications) and
run_consistency.py (figures taken from another record of the run: speedups, a tenant's figures alone).

Every kind of record:
  * one entry per active instance or copy (``ranks``, ``copies``: ``active_ranks``), which is the ranks per
    GPU times ``devices`` (per host on the CPU device; a mix's ranks per GPU are its tenants' sum);
  * one entry per repetition in ``window_s`` and in every summary's ``samples``; a summary's median, min
    and max are those of its samples (harness/result.cpp, harness/stats.cpp);
  * ``aggregate_cv`` the CV of the primary samples; ``noise.relative`` their relative noise (core stats)
    and ``noise.met`` whether it is within ``noise.target``;
  * each instance's ``mps_enabled`` what its mode implies (an MPS mode: true, another: false; core modes).

Kernel records: each aggregate sample is the total work over its window, ``active_ranks ×
iterations_per_repetition × work_per_iteration.X / window_s[i]`` (0 for an empty window), computed in
that order so that a reader gets the writer's double back; ``jain_fairness`` is Jain's index over the
ranks' ``throughput_per_s``; ``verified`` is not true while a rank failed its verification (the CI gate
relies on it).  Schema version 2 adds (each where present): a latency object's percentiles in order
(p50 <= p95 <= p99 <= max, mean <= max) and its ``count`` the sum of the ranks' ``latency_s.count``; the
collective's ``time_per_iteration_s`` with one sample per rank that timed it, each rank's
``collective_time_s`` one per repetition, ``fraction_of_iteration`` its median over the median of those
ranks' iteration times, and ``verified`` not true while ``collective.ok`` is false.  The optional
``noise``, ``warmup`` and ``clocks`` of newer files are checked by quality.py as well, and every kind's
``energy`` and ``gpu_activity`` by energy_consistency.py.
"""

from __future__ import annotations

import math
from typing import Any

from mpsbench_core.records import kind_of
from mpsbench_core.stats import median

from . import legacy
from .app_consistency import check_app
from .checks import SUM_TOL, check_common, check_spread, check_jain, check_latency, check_latency_stats, check_rates, check_summary, count
from .energy_consistency import check_activity, check_energy
from .errors import AnalysisError
from .mix_consistency import check_mix, check_no_tenants
from .quality import check_quality, check_settings
from .run_consistency import check_gains, check_run

#: aggregate key -> its work_per_iteration key (the schema requires each).
_AGGREGATES = {"flop_per_s": "flop", "byte_per_s": "byte", "item_per_s": "items"}
_NEEDED_BY_MEASUREMENTS = ("work_per_iteration", "aggregate")


def _check_kernel_rates(r: dict[str, Any], name: str, where: str) -> None:
    if r["iterations_per_repetition"] is None:
        return
    done = float(r["iterations_per_repetition"]) * r["active_ranks"]
    for key, work in _AGGREGATES.items():
        total = done * r["work_per_iteration"][work]
        check_rates(r["aggregate"][key]["samples"], [total] * len(r["window_s"]), r["window_s"],
                    f"active_ranks x iterations_per_repetition x work_per_iteration.{work} / window_s[i]",
                    name, f"{where}.aggregate.{key}.samples")


def check_kernel(r: dict[str, Any], name: str, where: str) -> None:
    """Raises AnalysisError on the first disagreement inside one schema-valid kernel or mix record."""
    aggregate = r["aggregate"]
    primary = aggregate[r["primary_metric"]]["samples"] if aggregate is not None else None
    check_common(r, "ranks", name, where)
    if r["window_s"]:
        for key in _NEEDED_BY_MEASUREMENTS:
            if r[key] is None:
                raise AnalysisError(f"null, but window_s holds {len(r['window_s'])} measured repetitions",
                                    name, f"{where}.{key}")
    if aggregate is not None:
        for key in _AGGREGATES:
            check_summary(aggregate[key], r["repetitions"], name, f"{where}.aggregate.{key}")
    check_spread(r, primary, name, where)
    mix = kind_of(r) == "mix"
    if r["window_s"] and not mix:  # a mix's aggregate adds its tenants' work at iteration counts not in the file
        _check_kernel_rates(r, name, where)
    if r["ranks"] and not mix:  # ranks of different tenants do different work: a mix's index says nothing
        check_jain(r["jain_fairness"], [rank["throughput_per_s"] for rank in r["ranks"]], name,
                   f"{where}.jain_fairness", "ranks[].throughput_per_s")
    # only this direction: a record may fail verification on more than its ranks show, but never pass it
    # while one of its ranks failed
    failing = [j for j, rank in enumerate(r["ranks"]) if not rank["verification"]["ok"]]
    if r["verified"] and failing:
        raise AnalysisError(f"true, but ranks[{failing[0]}].verification.ok is false", name, f"{where}.verified")
    for j, rank in enumerate(r["ranks"]):
        check_summary(rank["iteration_time_s"], r["repetitions"], name, f"{where}.ranks[{j}].iteration_time_s")
        if rank["gpu_iteration_time_s"] is not None:
            check_summary(rank["gpu_iteration_time_s"], r["repetitions"], name,
                          f"{where}.ranks[{j}].gpu_iteration_time_s")
        if rank.get("latency_s") is not None:
            check_latency_stats(rank["latency_s"], name, f"{where}.ranks[{j}].latency_s")
        if rank.get("collective_time_s") is not None:
            check_summary(rank["collective_time_s"], r["repetitions"], name, f"{where}.ranks[{j}].collective_time_s")
    if r.get("latency") is not None:
        check_latency(r["latency"], r["ranks"], name, f"{where}.latency")
    if r.get("collective") is not None:
        _check_collective(r, name, where)
    if mix:
        check_mix(r, name, where)
    else:
        check_no_tenants(r, name, where)
    check_quality(r, name, where)


def _check_collective(r: dict[str, Any], name: str, where: str) -> None:
    c = r["collective"]
    timed = [rank for rank in r["ranks"] if rank.get("collective_time_s") is not None]
    per_iteration = c["time_per_iteration_s"]
    check_summary(per_iteration, len(per_iteration["samples"]), name, f"{where}.collective.time_per_iteration_s")
    if r["ranks"] and len(per_iteration["samples"]) != len(timed):
        raise AnalysisError(f"{count(len(per_iteration['samples']), 'sample', 'samples')}, but "
                            f"{count(len(timed), 'rank has', 'ranks have')} a collective_time_s", name,
                            f"{where}.collective.time_per_iteration_s.samples")
    if timed:
        iteration = median([rank["iteration_time_s"]["median"] for rank in timed])
        expected = per_iteration["median"] / iteration if iteration > 0 else 0.0
        if not math.isclose(c["fraction_of_iteration"], expected, rel_tol=SUM_TOL, abs_tol=1e-12):
            raise AnalysisError(f"{c['fraction_of_iteration']!r} disagrees with time_per_iteration_s.median / the "
                                f"median of the ranks' iteration_time_s.median, {expected!r}", name,
                                f"{where}.collective.fraction_of_iteration")
    if r["verified"] and not c["ok"]:
        raise AnalysisError("true, but collective.ok is false", name, f"{where}.verified")


def _check_legacy_app(r: dict[str, Any], name: str, where: str) -> None:
    """A kernel-``app`` record of versions 1 and 2: what only that shape has, then the application checks on
    its version-3 shape (legacy.py), an error naming the field as this file has it."""
    if r["precision"] != r["app"]["name"]:
        raise AnalysisError(f"{r['precision']!r}, but app.name is {r['app']['name']!r} (an application record "
                            "of this version names the application in both)", name, f"{where}.precision")
    if r["aggregate"] is not None:
        for key in ("flop_per_s", "byte_per_s"):
            check_summary(r["aggregate"][key], r["repetitions"], name, f"{where}.aggregate.{key}")
            for i, sample in enumerate(r["aggregate"][key]["samples"]):
                if sample != 0:
                    raise AnalysisError(f"{sample!r}, but an application's runs have no {key} (0)", name,
                                        f"{where}.aggregate.{key}.samples[{i}]")
    try:
        check_app(legacy.app_record(r), name, where)
    except AnalysisError as exc:
        inner = exc.field[len(where) + 1:] if exc.field and exc.field.startswith(where + ".") else None
        if inner is None:
            raise
        raise AnalysisError(exc.detail, name, f"{where}.{legacy.v3_field(inner)}") from None


def check_consistency(doc: dict[str, Any], name: str) -> None:
    """Every record of a schema-valid document (see the module doc), the run's noise target, and the
    figures records take from each other (run_consistency.py)."""
    check_settings(doc["context"], name)
    for i, r in enumerate(doc["results"]):
        kind = kind_of(r)
        where = f"results[{i}]"
        if kind != "app":
            check_kernel(r, name, where)
        elif "kind" in r:
            check_app(r, name, where)
        else:
            _check_legacy_app(r, name, where)
        check_energy(r, name, where)
        check_activity(r, name, where)
    check_run(doc["results"], name)
    check_gains(doc, name)
