"""What a sweep records of its settings: the setting fields of ``context.sweep`` in a merged results file.

mpsbench-sweep builds one :class:`SweepRecord` from its command line before the first job and writes
it (:meth:`SweepRecord.to_json`) as the settings part of ``context.sweep``, next to what it learns
while running (jobs, daemons, exit status). The analysis reads it back with
:meth:`SweepRecord.from_json`, so both agree on every name; above all on ``gain_threshold``, the MPS
gain the run's verdict lines used, which ``mpsbench-analyze verdict FILE`` must use again to print the
same lines (:func:`recorded_threshold`).

``rounds`` is written as the schema's ``context.sweep.rounds``: ``{"count": R, "orders": [...]}``, the
orders from :func:`round_order.mode_order` (the rule the sweep planned its jobs by), so they are not stored
twice; files of sweeps before ``--rounds`` read back as one round.

A record is frozen: when the client ramp learns the MPS client limit from the daemon, the sweep makes
a new record with :func:`dataclasses.replace` rather than changing the settings it started with.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field, fields
from typing import Any, Mapping

from .round_order import orders
from .verdict import GAIN_THRESHOLD

TOOL = "mpsbench-sweep"


def _ints(value: Any) -> tuple[int, ...]:
    if not isinstance(value, (list, tuple)):
        return ()
    return tuple(v for v in value if isinstance(v, int) and not isinstance(v, bool))


def _strs(value: Any) -> tuple[str, ...]:
    return tuple(v for v in value if isinstance(v, str)) if isinstance(value, (list, tuple)) else ()


def _threshold(value: Any) -> float | None:
    """A usable gain threshold: a finite positive number, else None."""
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return None
    return float(value) if math.isfinite(value) and value > 0 else None


@dataclass(frozen=True)
class SweepRecord:
    """The settings of one sweep, as ``context.sweep`` names them (fields the sweep adds while running,
    such as ``jobs`` and ``daemons``, are not settings and not here)."""

    argv: tuple[str, ...]
    modes: tuple[str, ...]
    ranks_per_gpu: tuple[int, ...]      # the client ramp: its steps, as finally planned
    qos_percentages: tuple[int, ...] | None
    nodes: int
    gpus_per_node: int
    gpus_per_node_source: str
    launcher: str
    mpsbench: str | None                # None when an application is farmed (--app)
    mpsbench_options: tuple[str, ...]
    mps_control: str | None
    mps_client_limit: int
    gain_threshold: float = GAIN_THRESHOLD
    node_gpus: tuple[Mapping[str, Any], ...] | None = None
    mem_limits: tuple[str, ...] | None = None        # mode mps-mem
    mem_limit_device_ordinals: int | None = None
    app: Mapping[str, Any] | None = None             # --app: name, command, check, launcher, warm-up
    min_time_s: float | None = None
    repetitions: int | None = None
    device: str | None = None
    probe: str | None = None
    command: str | None = None                       # the sweep's command line as typed, shell-quoted
    rounds: int = 1                                  # --rounds: each job run this many times, modes interleaved
    turns: bool | None = None                        # --turns on: a round's jobs ran at once, in turns (None: off)
    tool: str = field(default=TOOL)

    #: Written only when set (an ordinary sweep has no memory limits and no application).
    OPTIONAL = ("mem_limits", "mem_limit_device_ordinals", "app", "min_time_s", "repetitions", "device", "probe",
                "command", "turns")

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {}
        for f in fields(self):
            value = getattr(self, f.name)
            if f.name in self.OPTIONAL and value is None:
                continue
            if f.name == "rounds":
                out[f.name] = {"count": value, "orders": orders(self.modes, value)}
                continue
            out[f.name] = list(value) if isinstance(value, tuple) else value
        return out

    @classmethod
    def from_json(cls, sweep: Mapping[str, Any]) -> "SweepRecord":
        """A lenient reading of ``context.sweep`` (a file may be older or hand-edited): a missing or
        malformed field takes its neutral value; ``gain_threshold`` defaults to GAIN_THRESHOLD."""
        def get(name: str, kind: type, default: Any) -> Any:
            value = sweep.get(name)
            return value if isinstance(value, kind) and not isinstance(value, bool) else default

        qos = sweep.get("qos_percentages")
        limits = sweep.get("mem_limits")
        gpus = sweep.get("node_gpus")
        rounds = sweep.get("rounds")
        count = rounds.get("count") if isinstance(rounds, Mapping) else None
        return cls(
            argv=_strs(sweep.get("argv")), modes=_strs(sweep.get("modes")),
            ranks_per_gpu=_ints(sweep.get("ranks_per_gpu")),
            qos_percentages=_ints(qos) if isinstance(qos, list) else None,
            nodes=get("nodes", int, 1), gpus_per_node=get("gpus_per_node", int, 1),
            gpus_per_node_source=get("gpus_per_node_source", str, ""), launcher=get("launcher", str, ""),
            mpsbench=get("mpsbench", str, None), mpsbench_options=_strs(sweep.get("mpsbench_options")),
            mps_control=get("mps_control", str, None), mps_client_limit=get("mps_client_limit", int, 0),
            gain_threshold=_threshold(sweep.get("gain_threshold")) or GAIN_THRESHOLD,
            node_gpus=tuple(g for g in gpus if isinstance(g, Mapping)) if isinstance(gpus, list) else None,
            mem_limits=_strs(limits) if isinstance(limits, list) else None,
            mem_limit_device_ordinals=get("mem_limit_device_ordinals", int, None),
            app=sweep.get("app") if isinstance(sweep.get("app"), Mapping) else None,
            min_time_s=_threshold(sweep.get("min_time_s")), repetitions=get("repetitions", int, None),
            device=get("device", str, None), probe=get("probe", str, None),
            command=get("command", str, None), tool=get("tool", str, TOOL),
            turns=True if sweep.get("turns") is True else None,
            rounds=count if isinstance(count, int) and not isinstance(count, bool) and count >= 1 else 1)


def recorded_threshold(doc: Mapping[str, Any]) -> float:
    """The MPS gain threshold the sweep that made ``doc`` printed its verdicts with
    (``context.sweep.gain_threshold``); GAIN_THRESHOLD for files without one (mpsbench's own, older sweeps)."""
    context = doc.get("context")
    sweep = context.get("sweep") if isinstance(context, Mapping) else None
    value = _threshold(sweep.get("gain_threshold")) if isinstance(sweep, Mapping) else None
    return GAIN_THRESHOLD if value is None else value
