"""Checks of a mix record (kind ``mix``: several kernels, its tenants, sharing each GPU): its tenants must be
the mix its own name says, and its ranks must be shared out among them as that mix says.

A mix record names its mix in ``precision``, ``KERNEL/PRECISION/SIZE:RANKS`` per tenant, comma-separated, in
--mix order (harness/plan.cpp, mix_name), and lists the same tenants in ``tenants``.  Its ranks per GPU are
the tenants' sum; on each device the first ranks run the first tenant, the next the second, and so on, so
that each tenant has exactly its ``ranks_per_gpu`` × ``devices`` ranks, and every rank names its tenant
(``ranks[].tenant``, an index into ``tenants``).  Each tenant's throughput summary has one sample per
repetition, its ``slowdown`` is ``alone_throughput / throughput.median`` and its ``latency_p99_ratio``
``latency.overall.p99 / alone_latency_p99_s``; its latency ``count`` adds its own ranks' requests.  Whether
``alone_throughput`` is what the tenant measured alone is a check across records (run_consistency.py).
A mix that failed may list no tenant (the writers leave them empty); one that lists them is checked.
"""

from __future__ import annotations

from typing import Any

from .checks import check_latency, check_summary, close, short
from .errors import AnalysisError


def mix_name(tenants: list[dict[str, Any]]) -> str:
    """The mix's name as its writer gives it from its tenants: ``matmul/fp32/4096:4,inference/fp16/8:4``."""
    return ",".join(f"{t['kernel']}/{t['precision']}/{t['size']}:{t['ranks_per_gpu']}" for t in tenants)


def check_no_tenants(r: dict[str, Any], name: str, where: str) -> None:
    """A record that is not a mix: no rank names a tenant."""
    for j, rank in enumerate(r["ranks"]):
        if rank.get("tenant") is not None:
            raise AnalysisError(f"{rank['tenant']}, but the record has no tenants", name, f"{where}.ranks[{j}].tenant")


def _check_shares(r: dict[str, Any], tenants: list[dict[str, Any]], name: str, where: str) -> None:
    """Every rank names one of the tenants, and each tenant has its ranks per GPU on every device."""
    members = [0] * len(tenants)
    for j, rank in enumerate(r["ranks"]):
        index = rank.get("tenant")
        if index is None or not 0 <= index < len(tenants):
            raise AnalysisError(f"{short(index)}, but a rank of a mix names one of its {len(tenants)} tenants "
                                f"(0 to {len(tenants) - 1})", name, f"{where}.ranks[{j}].tenant")
        members[index] += 1
    if not r["ranks"]:
        return
    for i, t in enumerate(tenants):
        expected = t["ranks_per_gpu"] * r["devices"]
        if members[i] != expected:
            raise AnalysisError(f"{t['ranks_per_gpu']} ranks per GPU on {r['devices']} device(s), but "
                                f"{members[i]} of the record's ranks name this tenant ({expected} expected)", name,
                                f"{where}.tenants[{i}].ranks_per_gpu")


def check_mix(r: dict[str, Any], name: str, where: str) -> None:
    """Raises AnalysisError on the first disagreement in a schema-valid mix record (module doc)."""
    tenants = r.get("tenants")
    if not tenants:  # a failed mix's [] (the schema requires two or more tenants of an ok one)
        check_no_tenants(r, name, where)
        return
    spec = mix_name(tenants)
    if r["precision"] != spec:
        raise AnalysisError(f"{r['precision']!r} names the mix, but its tenants are {spec!r}", name,
                            f"{where}.precision")
    total = sum(t["ranks_per_gpu"] for t in tenants)
    if total != r["ranks_per_gpu"]:
        raise AnalysisError(f"{r['ranks_per_gpu']}, but its tenants' ranks_per_gpu add up to {total}", name,
                            f"{where}.ranks_per_gpu")
    _check_shares(r, tenants, name, where)
    for i, t in enumerate(tenants):
        at = f"{where}.tenants[{i}]"
        check_summary(t["throughput"], r["repetitions"], name, f"{at}.throughput")
        if t["latency"] is not None:
            check_latency(t["latency"], [rank for rank in r["ranks"] if rank.get("tenant") == i], name, f"{at}.latency")
        shared = t["throughput"]["median"]
        if t["slowdown"] is None and t["alone_throughput"] is not None and shared > 0:
            raise AnalysisError(f"null, but alone_throughput / throughput.median is "
                                f"{t['alone_throughput'] / shared!r}", name, f"{at}.slowdown")
        if t["slowdown"] is not None:
            if t["alone_throughput"] is None or shared <= 0:
                raise AnalysisError(f"{t['slowdown']!r}, but there is no alone_throughput / throughput.median "
                                    "to derive it from", name, f"{at}.slowdown")
            if not close(t["slowdown"], t["alone_throughput"] / shared):
                raise AnalysisError(f"{t['slowdown']!r} disagrees with alone_throughput / throughput.median = "
                                    f"{t['alone_throughput'] / shared!r}", name, f"{at}.slowdown")
        alone_p99 = t["alone_latency_p99_s"]
        if t["latency_p99_ratio"] is None and t["latency"] is not None and alone_p99:
            raise AnalysisError(f"null, but latency.overall.p99 / alone_latency_p99_s is "
                                f"{t['latency']['overall']['p99'] / alone_p99!r}", name, f"{at}.latency_p99_ratio")
        if t["latency_p99_ratio"] is not None:
            if t["latency"] is None or not alone_p99:
                raise AnalysisError(f"{t['latency_p99_ratio']!r}, but there is no latency.overall.p99 / "
                                    "alone_latency_p99_s to derive it from", name, f"{at}.latency_p99_ratio")
            expected = t["latency"]["overall"]["p99"] / alone_p99
            if not close(t["latency_p99_ratio"], expected):
                raise AnalysisError(f"{t['latency_p99_ratio']!r} disagrees with latency.overall.p99 / "
                                    f"alone_latency_p99_s = {expected!r}", name, f"{at}.latency_p99_ratio")
