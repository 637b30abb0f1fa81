"""The record of the same run a figure is taken from (derived.ACROSS_RECORDS): for a speedup over one rank (copy) per
GPU, the same configuration and mode at one per GPU (core speedup.py; the record at the mode's label, else the
mode's only one-per-GPU record: mpsbench-sweep gives mps-qos at 100/k percent); for a mix tenant's
``alone_throughput`` (``alone_latency_p99_s``), the tenant's own configuration at its ranks per GPU, same mode.
Always of the same round (mpsbench-sweep --rounds), and only a measured (ok) record gives a figure; where it is
not in the file (a run cut to a few records, or merged from jobs that did not run it), nothing is checked.
"""

from __future__ import annotations

from typing import Any

from mpsbench_core import modes
from mpsbench_core.records import app_name, app_params, kind_of, params_text
from mpsbench_core.speedup import speedup_vs_one_per_gpu

#: Returned where the record a figure is taken from is not in the file (derived.SKIP is this object).
NOT_IN_FILE = object()


def _round(r: dict[str, Any]) -> int:
    value = r.get("round", 0)
    return value if isinstance(value, int) else 0


def _subject(r: dict[str, Any]) -> tuple:
    if kind_of(r) == "app":
        return "app", app_name(r), app_params(r)
    return kind_of(r), r["kernel"], r["precision"], r["size"], params_text(r.get("params"))


def _median(r: dict[str, Any], measured_only: bool = True) -> float | None:
    if (measured_only and r["status"] != "ok") or not r.get("aggregate"):
        return None
    return r["aggregate"][r["primary_metric"]]["median"]


def _latency_p99(r: dict[str, Any]) -> float | None:
    return r["latency"]["overall"]["p99"] if r["status"] == "ok" and r.get("latency") else None


class Run:
    """The records of one file, indexed for the figures they take from each other."""

    def __init__(self, results: list[dict[str, Any]]) -> None:
        self.records: dict[tuple, list[tuple[int, dict[str, Any]]]] = {}
        for j, r in enumerate(results):
            self.records.setdefault((_subject(r), r["ranks_per_gpu"], r["mode"], _round(r)), []).append((j, r))

    def _found(self, subject: tuple, ranks_per_gpu: int, r: dict[str, Any],
               any_label: bool) -> tuple[int, dict[str, Any]] | None:
        """The one record of ``subject`` at ``ranks_per_gpu``, mode and round of ``r``: at r's label, else (where
        ``any_label``) at any; None where there is none or more than one."""
        candidates = self.records.get((subject, ranks_per_gpu, r["mode"], _round(r)), [])
        found = [c for c in candidates if modes.label(c[1]) == modes.label(r)] or (candidates if any_label else [])
        return found[0] if len(found) == 1 else None

    def one_per_gpu(self, r: dict[str, Any]) -> tuple[int, dict[str, Any]] | None:
        return self._found(_subject(r), 1, r, any_label=True)

    def speedup(self, r: dict[str, Any]) -> Any:
        """core speedup_vs_one_per_gpu of the record against its one-per-GPU record; None where either has no
        throughput (a failed record's figures, where it has them, agree like an ok one's)."""
        mine, found = _median(r, measured_only=False), self.one_per_gpu(r)
        if mine is None or found is None:
            return None if mine is None else NOT_IN_FILE
        alone = _median(found[1])
        if alone is None or alone <= 0:
            return None
        return speedup_vs_one_per_gpu(r["ranks_per_gpu"], mine, alone)

    def why_no_speedup(self, r: dict[str, Any]) -> str:
        if _median(r, measured_only=False) is None:
            return "the record has no throughput (aggregate is null)"
        j, ref = self.one_per_gpu(r)
        return f"the one-per-GPU record results[{j}] has no throughput (status {ref['status']})"

    def _alone_record(self, r: dict[str, Any], t: int) -> tuple[int, dict[str, Any]] | None:
        tenant = r["tenants"][t]
        subject = ("kernel", tenant["kernel"], tenant["precision"], tenant["size"], params_text(tenant.get("params")))
        return self._found(subject, tenant["ranks_per_gpu"], r, any_label=False)

    def alone(self, r: dict[str, Any], t: int, field: str) -> Any:
        found = self._alone_record(r, t)
        if found is None:
            return NOT_IN_FILE
        return _median(found[1]) if field == "alone_throughput" else _latency_p99(found[1])

    def alone_text(self, r: dict[str, Any], t: int) -> str:
        j, _ = self._alone_record(r, t)
        return f"results[{j}] (the tenant alone at its ranks per GPU, mode {modes.label(r)})"
