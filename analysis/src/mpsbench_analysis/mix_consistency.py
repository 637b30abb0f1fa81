"""Checks of a mix record (kind ``mix``: several kernels, its tenants, sharing each GPU).

A mix record lists its tenants in ``tenants`` in --mix order; its ranks per GPU are the tenants' sum, and
every rank names its tenant (``ranks[].tenant``, an index into ``tenants``).  Each tenant's throughput
summary has one sample per repetition, its ``slowdown`` is ``alone_throughput / throughput.median`` and its
``latency_p99_ratio`` ``latency.overall.p99 / alone_latency_p99_s``; its latency ``count`` adds its own
ranks' requests.  A mix that failed may list no tenant (the writers leave them empty); one that lists them
is checked.
"""

from __future__ import annotations

from typing import Any

from .checks import check_latency, check_summary, close, short
from .errors import AnalysisError


def check_no_tenants(r: dict[str, Any], name: str, where: str) -> None:
    """A record that is not a mix: no rank names a tenant."""
    for j, rank in enumerate(r["ranks"]):
        if rank.get("tenant") is not None:
            raise AnalysisError(f"{rank['tenant']}, but the record has no tenants", name, f"{where}.ranks[{j}].tenant")


def check_mix(r: dict[str, Any], name: str, where: str) -> None:
    """Raises AnalysisError on the first disagreement in a schema-valid mix record (module doc)."""
    tenants = r.get("tenants")
    if not tenants:  # a failed mix's [] (the schema requires two or more tenants of an ok one)
        check_no_tenants(r, name, where)
        return
    total = sum(t["ranks_per_gpu"] for t in tenants)
    if total != r["ranks_per_gpu"]:
        raise AnalysisError(f"{r['ranks_per_gpu']}, but its tenants' ranks_per_gpu add up to {total}", name,
                            f"{where}.ranks_per_gpu")
    for j, rank in enumerate(r["ranks"]):
        index = rank.get("tenant")
        if index is None or not 0 <= index < len(tenants):
            raise AnalysisError(f"{short(index)}, but a rank of a mix names one of its {len(tenants)} tenants "
                                f"(0 to {len(tenants) - 1})", name, f"{where}.ranks[{j}].tenant")
    for i, t in enumerate(tenants):
        at = f"{where}.tenants[{i}]"
        check_summary(t["throughput"], r["repetitions"], name, f"{at}.throughput")
        if t["latency"] is not None:
            check_latency(t["latency"], [rank for rank in r["ranks"] if rank.get("tenant") == i], name, f"{at}.latency")
        shared = t["throughput"]["median"]
        if t["slowdown"] is not None and t["alone_throughput"] is not None and shared > 0:
            if not close(t["slowdown"], t["alone_throughput"] / shared):
                raise AnalysisError(f"{t['slowdown']!r} disagrees with alone_throughput / throughput.median = "
                                    f"{t['alone_throughput'] / shared!r}", name, f"{at}.slowdown")
        alone_p99 = t["alone_latency_p99_s"]
        if t["latency_p99_ratio"] is not None and t["latency"] is not None and alone_p99:
            expected = t["latency"]["overall"]["p99"] / alone_p99
            if not close(t["latency_p99_ratio"], expected):
                raise AnalysisError(f"{t['latency_p99_ratio']!r} disagrees with latency.overall.p99 / "
                                    f"alone_latency_p99_s = {expected!r}", name, f"{at}.latency_p99_ratio")
