"""When does MPS pay off?  The verdicts of core with the gains behind them, and two other questions.

By default (``mpsbench-analyze crossover FILE``, and the report) the answer is the verdict of
mpsbench_core.verdict, the one definition (verdicts.py): per kernel, precision and params, at each size
k(S) = the fewest ranks per GPU whose mps throughput is within noise of the fastest (among those measured in both
mps and timeslice), the MPS gain mps / timeslice at k(S) with its 95 % interval, and where it pays off, does
not, or the data cannot tell; per application, the best way to farm it and the
copies per GPU from which MPS pays off.  Its message is the verdict's sentence, its table the verdict's
points with the throughputs behind each gain.

Two other questions, asked explicitly and labelled as such in each title:
  * ``--ranks K``: the gain at K ranks per GPU at every size (kernels; an application's answer spans its
    counts anyway), judged by the same rule (core's verdict on the records at K alone);
  * ``--mode LABEL``: LABEL (``mps-qos:50%``; ``mps-qos`` for each of its labels) in place of mps, with
    the same definitions.  An application whose counts each have one label of that mode (mpsbench-sweep
    runs mps-qos at 100/k percent at k copies) is one series across its counts.
Their sentences, and every rendering of the answers, are in crossover_text.py.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any

import pandas as pd

from mpsbench_core import modes
from mpsbench_core.records import Result
from mpsbench_core.series import Point
from mpsbench_core.verdict import AppVerdict, KernelVerdict, MixVerdict, verdicts

from .crossover_text import gains_text, where_text
from .errors import AnalysisError
from .loader import ResultSet
from .tables import json_records
from .verdicts import file_verdicts, threshold_for


@dataclass
class Crossover:
    """One answer: a kernel's over sizes or an application's over copies per GPU, with its gains."""

    kind: str                  # "kernel" or "app"
    kernel: str                # the kernel, or the application's name
    precision: str             # "" for an application
    params: str
    mode: str                  # the mode label compared with timeslice ("mps" by default)
    threshold: float
    ranks_per_gpu: int | None  # --ranks K; None: the best ranks per GPU at each size (or every count)
    outcome: str               # core's (series.py): every, never, unclear, below, from, mixed; none
    crossover: int | None      # the first size where MPS is known not to pay off, or the count from which it does
    below: int | None          # an application's largest count still below the threshold
    message: str
    table: pd.DataFrame        # size or ranks_per_gpu, ..., <mode>, timeslice, unit, gain, pays_off

    @property
    def axis(self) -> str:
        return "ranks_per_gpu" if self.kind == "app" else "size"

    @property
    def title(self) -> str:
        name = (self.kernel if self.kind == "app" else f"{self.kernel} {self.precision}") + (
            f" ({self.params})" if self.params else "")
        if self.ranks_per_gpu is not None:
            how = f"at {self.ranks_per_gpu} ranks per GPU (fixed)"
        else:
            how = "across copies per GPU" if self.kind == "app" else "best ranks per GPU at each size"
        return f"{name}, {how}" + (f", {self.mode} against timeslice" if self.mode != "mps" else "")

    def to_json(self) -> dict[str, Any]:
        size_axis = self.axis == "size"
        return {"kind": self.kind, "kernel": self.kernel, "precision": self.precision, "params": self.params,
                "mode": self.mode, "axis": self.axis, "threshold": self.threshold,
                "question": "fixed ranks per GPU" if self.ranks_per_gpu is not None else "verdict",
                "ranks_per_gpu": self.ranks_per_gpu, "outcome": self.outcome,
                "crossover_size": self.crossover if size_axis else None,
                "crossover_ranks_per_gpu": None if size_axis else self.crossover,
                "below_ranks_per_gpu": self.below, "message": self.message,
                "table": json_records(self.table, list(self.table.columns))}


def _table(points: tuple[Point, ...], axis: str, mode: str, unit: str, threshold: float,
           labels: dict[int, str] | None = None) -> pd.DataFrame:
    rows = []
    for p in points:
        row: dict[str, Any] = ({"size": p.at, "ranks_per_gpu": p.k, "timeslice_ranks_per_gpu": p.k_timeslice or p.k}
                               if axis == "size" else {"ranks_per_gpu": p.k})
        if labels:
            row["mode_label"] = labels.get(p.k, mode)
        low, high = (p.interval.low, p.interval.high) if p.interval is not None else (p.gain, p.gain)
        row.update({mode: p.mps, "timeslice": p.timeslice, "unit": unit, "gain": p.gain, "gain_low": low,
                    "gain_high": high, "pays_off": p.verdict(threshold)})
        rows.append(row)
    columns = (["size", "ranks_per_gpu", "timeslice_ranks_per_gpu"] if axis == "size" else ["ranks_per_gpu"]) + (
        ["mode_label"] if labels else []) + [mode, "timeslice", "unit", "gain", "gain_low", "gain_high", "pays_off"]
    return pd.DataFrame(rows, columns=columns)


def _answer(v: KernelVerdict | AppVerdict, mode: str, unit: str, message: str | None = None,
            labels: dict[int, str] | None = None) -> Crossover:
    if isinstance(v, KernelVerdict):
        return Crossover("kernel", v.kernel, v.precision, v.params, mode, v.threshold, None, v.outcome, v.crossover,
                         None, message or v.sentence, _table(v.points, "size", mode, unit, v.threshold))
    return Crossover("app", v.name, "", v.params, mode, v.threshold, None, v.outcome, v.crossover, v.below,
                     message or v.sentence, _table(v.points, "ranks_per_gpu", mode, unit, v.threshold, labels))


def _units(records: list[Result]) -> dict[tuple, str]:
    units: dict[tuple, str] = {}
    for r in records:
        if r.unit:
            units.setdefault(r.subject, r.unit)
    return units


def _subject(v: KernelVerdict | AppVerdict) -> tuple:
    return ("kernel", v.kernel, v.precision, v.params) if isinstance(v, KernelVerdict) else ("app", v.name, "", v.params)


def _labels_of(records: list[Result], mode: str) -> list[str]:
    """The mode labels ``mode`` stands for: itself, or every label of a mode given without a value."""
    found = {r.mode_label for r in records if r.mode_label == mode or (
        ":" not in mode and modes.split_label(r.mode_label)[0] == mode)}
    return sorted(found - {"timeslice"}, key=modes.sort_key)


def _standing_in(records: list[Result], labels: set[str]) -> list[Result]:
    """The records with ``labels`` standing in for mps (and the mps records left out), so that core's
    definitions judge that mode against timeslice."""
    out = []
    for r in records:
        if r.mode_label in labels:
            out.append(replace(r, mode="mps", mode_label="mps"))
        elif r.mode != "mps":
            out.append(r)
    return out


def _other_mode(records: list[Result], mode: str, threshold: float) -> list[Crossover]:
    """--mode: each label of the mode in place of mps; an application's labels as one series when each of
    its counts has one."""
    labels = _labels_of(records, mode)
    units = _units(records)
    out: list[Crossover] = []
    kernels = [r for r in records if r.kind == "kernel"]
    for label in labels:
        for v in verdicts(_standing_in(kernels, {label}), threshold):
            if v.points:
                out.append(_answer(v, label, units.get(_subject(v), ""), _message(v, label)))
    apps = [r for r in records if r.kind == "app"]
    for subject in dict.fromkeys(r.subject for r in apps):  # an application at one binding
        mine = [r for r in apps if r.subject == subject]
        at_k: dict[int, set[str]] = {}
        for r in mine:
            if r.mode_label in labels:
                at_k.setdefault(r.ranks_per_gpu, set()).add(r.mode_label)
        own = sorted({label for found in at_k.values() for label in found}, key=modes.sort_key)
        one_series = len(own) > 1 and all(len(found) == 1 for found in at_k.values())
        for label, members in ([(mode, set(own))] if one_series else [(label, {label}) for label in own]):
            shown = {k: next(iter(found)) for k, found in at_k.items()} if one_series else None
            for v in verdicts(_standing_in(mine, members), threshold):
                if v.points:
                    out.append(_answer(v, label, units.get(_subject(v), ""), _message(v, label), shown))
    return out


def _message(v: KernelVerdict | AppVerdict, mode: str) -> str:
    axis = "size" if isinstance(v, KernelVerdict) else "copies"
    return where_text(axis, v.points, v.threshold, mode) + "; " + gains_text(axis, v.points, best=axis == "size")


def _fixed_ranks(records: list[Result], mode: str, ranks: int, threshold: float) -> list[Crossover]:
    """--ranks K: each kernel's gain at K ranks per GPU by size, for each label ``mode`` stands for: core's
    verdict on the records at K alone (so the best ranks per GPU is K at every size)."""
    units = _units(records)
    out = []
    at_k = [r for r in records if r.kind == "kernel" and r.ranks_per_gpu == ranks]
    for label in _labels_of(records, mode):
        for v in verdicts(_standing_in(at_k, {label}), threshold):
            if not isinstance(v, KernelVerdict) or not v.points:
                continue
            message = where_text("size", v.points, threshold, label) + "; " + gains_text("size", v.points, best=False)
            out.append(Crossover("kernel", v.kernel, v.precision, v.params, label, threshold, ranks, v.outcome,
                                 v.crossover, None, message,
                                 _table(v.points, "size", label, units.get(_subject(v), ""), threshold)))
    return out


def all_crossovers(rs: ResultSet, threshold: float | None = None, ranks: int | None = None,
                   mode: str = "mps") -> list[Crossover]:
    """The answers of the crossover command (module doc), kernels then applications, in the order they
    first appear.  Raises AnalysisError when nothing was measured in both ``mode`` and timeslice."""
    threshold = threshold_for(rs, threshold)
    records = rs.records()
    if ranks is not None:
        found = _fixed_ranks(records, mode, ranks, threshold)
        if not found:
            measured = sorted({r.ranks_per_gpu for r in records if r.kind == "kernel"})
            raise AnalysisError(f"no kernel configuration at {ranks} ranks per GPU was measured in both mode {mode} "
                                f"and timeslice (ranks per GPU measured: {', '.join(map(str, measured)) or 'none'})",
                                ", ".join(rs.files))
    elif mode == "mps":
        units = _units(records)
        found = [_answer(v, "mps", units.get(_subject(v), "")) for v in file_verdicts(rs, threshold)
                 if not isinstance(v, MixVerdict)]  # a mix has no gains: its verdict speaks per tenant
        if not any(c.outcome != "none" for c in found):
            found = []
    else:
        found = _other_mode(records, mode, threshold)
    if not found:
        have = ", ".join(sorted({r.mode_label for r in records}, key=modes.sort_key))
        raise AnalysisError(f"no configuration was measured in both mode {mode} and timeslice (modes present: "
                            f"{have})", ", ".join(rs.files))
    return sorted(found, key=lambda c: c.kind == "app")  # stable: kernels first, each kind in file order
