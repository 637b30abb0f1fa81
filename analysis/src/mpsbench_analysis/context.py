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


# (field as shown, how to read it, mismatch?) in the order they are reported.
_FIELDS: list[tuple[str, Callable[[dict[str, Any]], Any], bool]] = [
    ("device.used", lambda c: _get(c, "device.used"), True),
    ("gpus[].name", _per_gpu("name"), True),
    ("len(gpus)", lambda c: len(c.get("gpus", [])), True),
    ("gpus[].sm_count", _per_gpu("sm_count"), False),
    ("gpus[].memory_total_bytes", _per_gpu("memory_total_bytes"), False),
    ("gpus[].compute_mode", _per_gpu("compute_mode"), False),
    ("gpus[].sm_clock_peak_khz", _per_gpu("sm_clock_peak_khz"), False),
    ("cuda.driver_version", lambda c: _get(c, "cuda.driver_version"), False),
    ("cuda.runtime_version", lambda c: _get(c, "cuda.runtime_version"), False),
    ("cuda.cublas_version", lambda c: _get(c, "cuda.cublas_version"), False),
    ("version", lambda c: c.get("version"), False),
    ("git_commit", _commit, False),
    ("mpi.library_version", lambda c: _get(c, "mpi.library_version"), False),
    ("mpi.world_size", lambda c: _get(c, "mpi.world_size"), False),
    ("settings.min_time_s", lambda c: _get(c, "settings.min_time_s"), False),
    ("settings.repetitions", lambda c: _get(c, "settings.repetitions"), False),
    ("settings.seed", lambda c: _get(c, "settings.seed"), False),
]


def context_differences(base: dict[str, Any], new: dict[str, Any]) -> list[ContextDifference]:
    """Every compared field that differs, mismatches first, then notes, each in a fixed order.

    The sharing modes: ``sweep.modes`` when either file was merged by
    mpsbench-sweep (its ``mode_requested`` is only its first job's), else
    ``mode_requested``.
    """
    fields = list(_FIELDS)
    if _sweep_modes(base) is not None or _sweep_modes(new) is not None:
        fields.append(("sweep.modes", _sweep_modes, False))
    else:
        fields.append(("mode_requested", lambda c: c.get("mode_requested"), False))
    out = []
    for name, read, mismatch in fields:
        b, n = read(base), read(new)
        if b != n:
            out.append(ContextDifference(name, _show(b), _show(n), mismatch))
    return sorted(out, key=lambda d: not d.mismatch)


def describe_device(ctx: dict[str, Any]) -> str:
    """'gpu, 1 x "NVIDIA H100 80GB HBM3"' or 'cpu': what the mismatch fields say about a run."""
    used = str(_get(ctx, "device.used"))
    gpus = ctx.get("gpus", [])
    if not gpus:
        return used
    return f"{used}, {len(gpus)} x {_show(_per_gpu('name')(ctx))}"
