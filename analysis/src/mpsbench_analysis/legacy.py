"""Records of schema versions 1 and 2 in the shape of version 3, so that nothing downstream reads a version.

Version 3 gave every record a ``kind`` and an application record a shape of its own
(schema ``app_result``).  Before it, a record had no kind: kernel ``mix`` marked a mix, and kernel
``app`` a farmed application, with the application's name in ``precision``, its runs per second in
``aggregate.item_per_s`` (FLOP/s and bytes/s written as 0), its copies in ``ranks`` (each copy's runs in
``kernel_details.runs``, its mean run time per repetition in ``iteration_time_s``, its --app-check in
``verification``: ``checked_values`` runs checked, ``detail`` naming the failed ones) and its speedup
in ``speedup_vs_one_rank_per_gpu``.  :func:`upgraded` maps each such field to its version-3 place;
:func:`v3_field` maps a version-3 field path back, so that an error found in the upgraded record
names the field of the file the user has.
"""

from __future__ import annotations

import re
from typing import Any

from mpsbench_core.records import kind_of

#: What the kept fields of a legacy application record are called in version 3 (and back).
_RENAMED = {"speedup_vs_one_rank_per_gpu": "speedup_vs_one_copy_per_gpu"}
#: Version-3 copy fields and where a legacy ranks[] entry kept them.
_COPY_FIELDS = {"copy": "rank", "local_copy": "local_rank", "runs": "kernel_details.runs",
                "run_time_s": "iteration_time_s", "check.ok": "verification.ok",
                "check.checked_runs": "verification.checked_values", "check.failed_runs": "verification.detail",
                "check": "verification"}
_KEPT = ("mode", "mps_active_thread_percentage", "mps_pinned_device_mem_limit", "ranks_per_gpu", "device",
         "devices", "active_ranks", "repetitions", "status", "error", "primary_unit", "window_s", "aggregate_cv",
         "noise", "jain_fairness", "verified", "app")
_FAILED_CHECKS = re.compile(r"failed on ([0-9]+) of ([0-9]+)")


def _failed_check_runs(verification: dict[str, Any]) -> int:
    """Runs whose --app-check failed: the writer said how many in ``detail`` ("--app-check failed on 2 of
    4 runs"); at least one when the copy's check failed and the detail does not say."""
    if verification.get("ok"):
        return 0
    found = _FAILED_CHECKS.search(str(verification.get("detail") or ""))
    return int(found.group(1)) if found else 1


def _copy(rank: dict[str, Any]) -> dict[str, Any]:
    verification = rank.get("verification") or {}
    details = rank.get("kernel_details") or {}
    return {"copy": rank["rank"], "host": rank["host"], "local_copy": rank["local_rank"],
            "gpu_index": rank["gpu_index"], "gpu_uuid": rank["gpu_uuid"], "mps_enabled": rank["mps_enabled"],
            "sm_count": rank["sm_count"], "runs": int(details.get("runs", 0)), "run_time_s": rank["iteration_time_s"],
            "throughput_per_s": rank["throughput_per_s"],
            "check": {"ok": bool(verification.get("ok")), "checked_runs": int(verification.get("checked_values") or 0),
                      "failed_runs": _failed_check_runs(verification)}}


def app_record(r: dict[str, Any]) -> dict[str, Any]:
    """A legacy kernel-``app`` record as the ``app_result`` of version 3."""
    out: dict[str, Any] = {"kind": "app", **{key: r[key] for key in _KEPT if key in r}}
    aggregate = r.get("aggregate")
    out["primary_metric"] = "run_per_s"
    out["aggregate"] = {"run_per_s": aggregate["item_per_s"]} if aggregate else None
    out["speedup_vs_one_copy_per_gpu"] = r.get("speedup_vs_one_rank_per_gpu")
    out["copies"] = [_copy(rank) for rank in r.get("ranks", [])]
    return out


def upgraded(r: dict[str, Any]) -> dict[str, Any]:
    """``r`` in the version-3 shape: itself when it has a kind, else with the kind its kernel implies,
    an application as :func:`app_record` makes it."""
    if "kind" in r:
        return r
    kind = kind_of(r)
    return app_record(r) if kind == "app" else {"kind": kind, **r}


def upgraded_document(doc: dict[str, Any]) -> dict[str, Any]:
    """``doc`` with every record :func:`upgraded` (a shallow copy; the records of a version-3 file are
    its own)."""
    if doc.get("schema_version") == 3:
        return doc
    return {**doc, "results": [upgraded(r) for r in doc["results"]]}


def v3_field(path: str) -> str:
    """A field path of an upgraded application record (``copies[2].check.ok``) as the legacy record names
    it (``ranks[2].verification.ok``)."""
    found = re.fullmatch(r"copies(\[[0-9]+\])(?:\.(.+))?", path)
    if found:
        index, inner = found.groups()
        if inner is None:
            return f"ranks{index}"
        for new, old in _COPY_FIELDS.items():
            if inner == new or inner.startswith(new + "."):
                return f"ranks{index}.{old}{inner[len(new):]}"
        return f"ranks{index}.{inner}"
    if path == "copies":
        return "ranks"
    if path.startswith("aggregate.run_per_s"):
        return "aggregate.item_per_s" + path[len("aggregate.run_per_s"):]
    return next((old for old, new in _RENAMED.items() if path == new), path)
