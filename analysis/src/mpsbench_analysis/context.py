"""Compares the run context of two results files (``compare`` checks it first).

Verdicts between two runs mean something only when both measured the same
kind of device: a different GPU model, a different number of GPUs, or a
GPU run against a CPU run makes every ratio meaningless, so those fields are
*mismatches* (``compare`` refuses them unless told otherwise).  Every other
field listed here is a *note*: it may explain a change (a new driver, CUDA
runtime or cuBLAS, other settings) or be the very thing under test (the
commit), so it is reported and never fails anything.  Host names, GPU UUIDs,
the date and the command line are not compared: two comparable runs differ
there as a rule.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any, Callable

ABSENT = "(absent)"
NONE = "(none)"

#: Fields whose difference makes a comparison meaningless.
MISMATCH_FIELDS = ("device.used", "gpus[].name", "len(gpus)")


@dataclass(frozen=True)
class ContextDifference:
    """One field whose value differs between BASE and NEW (values as displayed)."""

    field: str
    base: str
    new: str
    mismatch: bool  # True: the comparison is meaningless; False: a note

    def describe(self) -> str:
        return f"{self.field}: BASE {self.base}, NEW {self.new}"


def _show(value: Any) -> str:
    if value is None:
        return ABSENT
    if isinstance(value, str):
        return json.dumps(value) if value else NONE
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (list, tuple)):
        return ", ".join(_show(v) for v in value) if value else NONE
    return f"{value:g}" if isinstance(value, float) else str(value)


def _get(ctx: dict[str, Any], path: str) -> Any:
    value: Any = ctx
    for part in path.split("."):
        if not isinstance(value, dict) or part not in value:
            return None
        value = value[part]
    return value


def _per_gpu(key: str) -> Callable[[dict[str, Any]], Any]:
    """The distinct values of one field over ``gpus[]``, sorted (8 equal GPUs show one value)."""
    return lambda ctx: sorted({g.get(key) for g in ctx.get("gpus", [])}, key=str)


def _commit(ctx: dict[str, Any]) -> str:
    commit = str(ctx.get("git_commit", "unknown"))
    short = commit[:12] if commit != "unknown" else commit
    return short + ("+dirty" if ctx.get("git_dirty") else "")


def _sweep_modes(ctx: dict[str, Any]) -> Any:
    sweep = ctx.get("sweep")
    return sweep.get("modes") if isinstance(sweep, dict) else None


# (field as shown, how to read it) in the order they are reported; a reader of
# None reads the field at that dotted path.
_FIELDS: list[tuple[str, Callable[[dict[str, Any]], Any] | None]] = [
    ("device.used", None),
    ("gpus[].name", _per_gpu("name")),
    ("len(gpus)", lambda c: len(c.get("gpus", []))),
    ("gpus[].sm_count", _per_gpu("sm_count")),
    ("gpus[].memory_total_bytes", _per_gpu("memory_total_bytes")),
    ("gpus[].compute_mode", _per_gpu("compute_mode")),
    ("gpus[].sm_clock_peak_khz", _per_gpu("sm_clock_peak_khz")),
    ("cuda.driver_version", None),
    ("cuda.runtime_version", None),
    ("cuda.cublas_version", None),
    ("version", None),
    ("git_commit", _commit),
    ("mpi.library_version", None),
    ("mpi.world_size", None),
    ("settings.min_time_s", None),
    ("settings.repetitions", None),
    ("settings.seed", None),
    # the adaptive protocol (absent in files written before it: a note, not a mismatch)
    ("settings.warmup_time_s", None),
    ("settings.max_noise", None),
    ("settings.max_time_s", None),
    ("settings.discard_throttled", None),
    ("settings.throttle_retries", None),
    ("settings.clock_threshold", None),
    # schema version 2: the host collective and the mix of tenants (absent before: null = absent)
    ("settings.allreduce_bytes", None),
    ("mix", None),
]


def context_differences(base: dict[str, Any], new: dict[str, Any]) -> list[ContextDifference]:
    """Every compared field that differs, mismatches first, then notes, each in a fixed order.

    The sharing modes: ``sweep.modes`` when either file was merged by
    mpsbench-sweep (its ``mode_requested`` is only its first job's), else
    ``mode_requested``.
    """
    fields = list(_FIELDS)
    if _sweep_modes(base) is not None or _sweep_modes(new) is not None:
        fields.append(("sweep.modes", _sweep_modes))
    else:
        fields.append(("mode_requested", None))
    out = []
    for name, read in fields:
        b, n = (read(base), read(new)) if read else (_get(base, name), _get(new, name))
        if b != n:
            out.append(ContextDifference(name, _show(b), _show(n), name in MISMATCH_FIELDS))
    return sorted(out, key=lambda d: not d.mismatch)


def differs_from_base(diffs: list[ContextDifference]) -> str:
    """'run context differs from BASE: field: BASE x, NEW y; ...' (the error and the warning)."""
    return "run context differs from BASE: " + "; ".join(d.describe() for d in diffs)


def describe_device(ctx: dict[str, Any]) -> str:
    """'gpu, 1 x "NVIDIA H100 80GB HBM3"' or 'cpu': what the mismatch fields say about a run."""
    used = str(_get(ctx, "device.used"))
    gpus = ctx.get("gpus", [])
    if not gpus:
        return used
    return f"{used}, {len(gpus)} x {_show(_per_gpu('name')(ctx))}"
