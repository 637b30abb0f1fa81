"""Checks across the records of one file: figures a record took from another record of the same run.

* A speedup over one rank (one copy) per GPU, ``speedup_vs_one_rank_per_gpu`` of a kernel and
  ``speedup_vs_one_copy_per_gpu`` of an application, is the record's primary median over that of the same
  configuration and mode at one rank per GPU (the record at that mode's label when there is one, else the
  mode's only one-rank record: mpsbench-sweep gives mps-qos at 100/k percent), 1 at one rank.  Where that
  record is in the file, the speedup must be its ratio (null when it failed); a record without a throughput
  has no speedup.
* A mix's tenant ``alone_throughput`` (``alone_latency_p99_s``) is the primary median (the overall p99
  latency) of the tenant's own configuration at its own ranks per GPU, in the same mode; where that record
  is in the file, the figures must be its own (null when it failed).
Both come from a record of the same round (mpsbench-sweep --rounds: each round's processes measured their own).
* ``context.sweep.gains``, the MPS gains' intervals a sweep writes, must be what core derives from the records.
Where the other record is not in the file (a run cut to a few records, or merged from jobs that did not
run it), there is nothing to check against.
"""

from __future__ import annotations

import math
from typing import Any, Iterable

from mpsbench_core import modes
from mpsbench_core.gain_record import first_difference
from mpsbench_core.records import app_name, app_params, kind_of, params_text, results_of

from .checks import SUM_TOL, short
from .errors import AnalysisError

_SPEEDUPS = ("speedup_vs_one_rank_per_gpu", "speedup_vs_one_copy_per_gpu")


def _subject(r: dict[str, Any]) -> tuple:
    kind = kind_of(r)
    if kind == "app":
        return kind, app_name(r), app_params(r)  # one copy per GPU at the same binding
    return kind, r["kernel"], r["precision"], r["size"], params_text(r.get("params"))


def _round(r: dict[str, Any]) -> int:
    """The record's round (mpsbench-sweep --rounds); a figure is taken from a record of the same round,
    measured by the same processes."""
    value = r.get("round", 0)
    return value if isinstance(value, int) else 0


def _median(r: dict[str, Any], measured_only: bool = True) -> float | None:
    """The primary median of a record; None without an aggregate, and for a failed one when
    ``measured_only`` (a figure taken from another record is taken from a measured one)."""
    if (measured_only and r["status"] != "ok") or not r.get("aggregate"):
        return None
    return r["aggregate"][r["primary_metric"]]["median"]


def _reference(candidates: list[tuple[int, dict[str, Any]]], label: str) -> tuple[int, dict[str, Any]] | None:
    """The one record of the mode to compare with: the one at the same label, else the only one."""
    same = [c for c in candidates if modes.label(c[1]) == label]
    found = same or candidates
    return found[0] if len(found) == 1 else None


def _check_speedups(results: list[dict[str, Any]], name: str) -> None:
    one_rank: dict[tuple, list[tuple[int, dict[str, Any]]]] = {}
    for j, r in enumerate(results):
        if r["ranks_per_gpu"] == 1:
            one_rank.setdefault((_subject(r), r["mode"], _round(r)), []).append((j, r))
    for i, r in enumerate(results):
        key = next((k for k in _SPEEDUPS if k in r), None)
        speedup = r.get(key) if key else None
        if speedup is None:
            continue
        where = f"results[{i}].{key}"
        mine = _median(r, measured_only=False)  # a failed record's figures, where it has them, agree like an ok one's
        if mine is None:
            raise AnalysisError(f"{speedup!r}, but the record has no throughput (aggregate is null)", name, where)
        found = _reference(one_rank.get((_subject(r), r["mode"], _round(r)), []), modes.label(r))
        if found is None:
            continue
        j, ref = found
        alone = _median(ref)
        if alone is None or alone <= 0:
            raise AnalysisError(f"{speedup!r}, but the one-per-GPU record results[{j}] has no throughput "
                                f"(status {ref['status']})", name, where)
        if not math.isclose(speedup, mine / alone, rel_tol=SUM_TOL):
            raise AnalysisError(f"{speedup!r} disagrees with the primary median over that of results[{j}] (one per "
                                f"GPU), {mine / alone!r}", name, where)


def _latency_p99(r: dict[str, Any]) -> float | None:
    latency = r.get("latency")
    return latency["overall"]["p99"] if r["status"] == "ok" and latency else None


def _check_tenants_alone(results: list[dict[str, Any]], name: str) -> None:
    alone: dict[tuple, list[tuple[int, dict[str, Any]]]] = {}
    for j, r in enumerate(results):
        if kind_of(r) == "kernel":
            key = (r["kernel"], r["precision"], r["size"], params_text(r.get("params")), r["ranks_per_gpu"],
                   modes.label(r), _round(r))
            alone.setdefault(key, []).append((j, r))
    for i, r in enumerate(results):
        if kind_of(r) != "mix":
            continue
        for t_index, t in enumerate(r.get("tenants") or []):
            key = (t["kernel"], t["precision"], t["size"], params_text(t.get("params")), t["ranks_per_gpu"],
                   modes.label(r), _round(r))
            found = alone.get(key, [])
            if len(found) != 1:
                continue
            j, ref = found[0]
            where = f"results[{i}].tenants[{t_index}]"
            for field, expected in (("alone_throughput", _median(ref)), ("alone_latency_p99_s", _latency_p99(ref))):
                value = t[field]
                if (value is None) != (expected is None) or (value is not None and not
                                                                math.isclose(value, expected, rel_tol=SUM_TOL)):
                    raise AnalysisError(f"{short(value)}, but results[{j}] (the tenant alone at its ranks per GPU, "
                                        f"mode {modes.label(r)}) measured {short(expected)}", name, f"{where}.{field}")


def check_gains(doc: dict[str, Any], name: str) -> None:
    """``context.sweep.gains`` (the MPS gains with their intervals, mpsbench-sweep) must be what core derives from
    the file's own records (mpsbench_core.gain_record): one generic re-derivation, not a rule per field."""
    sweep = doc["context"].get("sweep")
    if not isinstance(sweep, dict) or "gains" not in sweep:
        return
    found = first_difference(sweep["gains"], results_of([doc]))
    if found is not None:
        where, written, derived = found
        raise AnalysisError(f"{short(written)}, but the records give {short(derived)}", name,
                            f"context.sweep.gains{where}")


def check_run(results: Iterable[dict[str, Any]], name: str) -> None:
    """Raises AnalysisError on the first figure that disagrees with the record it was taken from."""
    results = list(results)
    _check_speedups(results, name)
    _check_tenants_alone(results, name)
