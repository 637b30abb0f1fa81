"""How much each tenant of a mix slows down when it shares a GPU with another kernel.

A run with ``mpsbench --mix A:a,B:b`` holds, per mode, the records of A
alone at a ranks per GPU, B alone at b, A at a+b, B at a+b (each tenant
sharing with itself) and the mix record (kind ``mix``) with one entry per
tenant in ``tenants``.  From those, per file and mode, with ``thr`` the
median over the repetitions of the aggregate primary throughput:

  slowdown(victim A, co-runner B) = thr(A alone at a) / thr(A's ranks in the mix)
      the mix's ``tenants[i].throughput.median``; above 1: A runs slower
      next to B than alone.
  slowdown(A, A), the diagonal = thr(A alone at a) / (thr(A at a+b) * a / (a+b))
      A's share of the GPU when the other b ranks run A too: the homogeneous
      record at a+b ranks per GPU holds a+b ranks' work, a/(a+b) of it is
      what A's own a ranks did, so the diagonal is the slowdown of sharing
      with itself, the yardstick for the off-diagonal cells.

``thr(A alone at a)`` is taken from the homogeneous record in the same file
and mode; when that record is missing or failed, from the tenant's
``alone_throughput`` (which mpsbench took from the same records).  A mix of
more than two tenants gives one row per tenant in the table, its co-runner
the other tenants together, and stays out of the pairwise matrix.  The
matrix of a mode has a row per victim and a column per co-runner, in the
order the tenants first appear; a cell no mix measured is NaN.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

from mpsbench_core.modes import sort_key as mode_sort_key
from mpsbench_core.records import params_text

from .loader import ResultSet
from .tables import Column
from mpsbench_core.units import format_number, format_si


def slowdown(alone: float | None, shared: float | None) -> float:
    """alone / shared: above 1 = slower when sharing; NaN when either is missing or shared is not positive."""
    if alone is None or shared is None or not (math.isfinite(alone) and math.isfinite(shared)) or shared <= 0:
        return math.nan
    return alone / shared


def self_slowdown(alone: float | None, together: float | None, own_ranks: int, total_ranks: int) -> float:
    """The diagonal: alone / (together * own_ranks / total_ranks), the slowdown of a tenant of
    ``own_ranks`` ranks per GPU whose GPU is shared with ``total_ranks - own_ranks`` ranks of its own kind
    (``together``: the throughput of the homogeneous record at ``total_ranks``)."""
    if together is None or own_ranks <= 0 or total_ranks <= 0:
        return math.nan
    return slowdown(alone, together * own_ranks / total_ranks)


@dataclass(frozen=True)
class Tenant:
    """One tenant: its configuration, as a row and column of the matrix."""

    kernel: str
    precision: str
    size: int
    params: str  # params_text of its params
    ranks_per_gpu: int

    @classmethod
    def of(cls, t: dict[str, Any]) -> "Tenant":
        return cls(t["kernel"], t["precision"], int(t["size"]), params_text(t.get("params")), int(t["ranks_per_gpu"]))

    @property
    def label(self) -> str:
        """``inference/fp16/64:4``; params in brackets after the size (``[hidden=1024]``) when it has some."""
        params = f"[{self.params}]" if self.params else ""
        return f"{self.kernel}/{self.precision}/{self.size}{params}:{self.ranks_per_gpu}"


#: The columns of :func:`slowdown_table`.
TABLE_COLUMNS = ["file", "mode", "victim", "co_runner", "kind", "slowdown", "alone", "shared", "unit",
                 "ranks_per_gpu", "total_ranks_per_gpu", "mix", "file_slowdown", "alone_source",
                 "latency_p99_s", "alone_latency_p99_s", "latency_p99_ratio", "devices"]


def _homogeneous(results: pd.DataFrame, file: str, mode: str, t: Tenant, ranks: int,
                 metric: str) -> pd.Series | None:
    """The ok record of ``t``'s configuration at ``ranks`` ranks per GPU in that file and mode, or None."""
    sel = results[(results["file"] == file) & (results["mode_label"] == mode) & (results["kind"] == "kernel")
                  & (results["kernel"] == t.kernel)
                  & (results["precision"] == t.precision) & (results["params"] == t.params)
                  & (results["ranks_per_gpu"] == ranks) & (results["status"] == "ok")
                  & (results["primary_metric"] == metric)]
    sel = sel[[size == t.size for size in sel["size"]]]
    return None if sel.empty else sel.iloc[0]


def _number(value: Any) -> float:
    return math.nan if value is None else float(value)


def slowdown_table(rs: ResultSet) -> pd.DataFrame:
    """One row per tenant of every successful mix record (kind ``mix``) and one per tenant sharing with
    itself (kind ``self``, the diagonal), with the throughputs behind each slowdown (module doc)."""
    r = rs.results
    mixes = r[(r["kind"] == "mix") & (r["status"] == "ok")]
    rows: list[dict[str, Any]] = []
    seen_self: set[tuple] = set()
    for _, m in mixes.iterrows():
        tenants = m["tenants"] or []
        specs = [Tenant.of(t) for t in tenants]
        total = int(m["ranks_per_gpu"])
        for i, (t, spec) in enumerate(zip(tenants, specs)):
            metric = t["primary_metric"]
            alone_row = _homogeneous(r, m["file"], m["mode_label"], spec, spec.ranks_per_gpu, metric)
            if alone_row is not None:
                alone, source = float(alone_row["throughput"]), "record"
                alone_p99 = float(alone_row["latency_p99_s"])
            else:
                alone, source = _number(t["alone_throughput"]), "tenant" if t["alone_throughput"] is not None else ""
                alone_p99 = _number(t["alone_latency_p99_s"])
            others = [s.label for j, s in enumerate(specs) if j != i]
            shared = float(t["throughput"]["median"])
            p99 = _number(t["latency"]["overall"]["p99"]) if t["latency"] else math.nan
            common = {"file": m["file"], "mode": m["mode_label"], "victim": spec.label, "unit": t["primary_unit"],
                      "ranks_per_gpu": spec.ranks_per_gpu, "total_ranks_per_gpu": total, "mix": m["precision"],
                      "alone_source": source, "alone_latency_p99_s": alone_p99, "devices": int(m["devices"])}
            rows.append({**common, "co_runner": " + ".join(others), "kind": "mix" if len(specs) == 2 else "mix-n",
                         "slowdown": slowdown(alone, shared), "alone": alone, "shared": shared,
                         "file_slowdown": _number(t["slowdown"]), "latency_p99_s": p99,
                         "latency_p99_ratio": p99 / alone_p99 if alone_p99 > 0 else math.nan})
            key = (m["file"], m["mode_label"], spec, total)
            if key in seen_self:
                continue
            seen_self.add(key)
            together = _homogeneous(r, m["file"], m["mode_label"], spec, total, metric)
            if together is None:
                continue
            share = float(together["throughput"]) * spec.ranks_per_gpu / total
            together_p99 = float(together["latency_p99_s"])
            rows.append({**common, "co_runner": spec.label, "kind": "self",
                         "slowdown": self_slowdown(alone, float(together["throughput"]), spec.ranks_per_gpu, total),
                         "alone": alone, "shared": share, "file_slowdown": math.nan, "latency_p99_s": together_p99,
                         "latency_p99_ratio": together_p99 / alone_p99 if alone_p99 > 0 else math.nan})
    table = pd.DataFrame(rows, columns=TABLE_COLUMNS)
    if table.empty:
        return table
    table["_mode"] = table["mode"].map(mode_sort_key)  # within a mode: the tenants in --mix order
    table = table.sort_values(["_mode"], kind="stable")
    return table.drop(columns=["_mode"]).reset_index(drop=True)


def tenant_order(table: pd.DataFrame) -> list[str]:
    """Every tenant label of the pairwise rows, in the order of first appearance (as victim, then co-runner)."""
    pairs = table[table["kind"].isin(["mix", "self"])]
    out: list[str] = []
    for victim, co in zip(pairs["victim"], pairs["co_runner"]):
        for label in (victim, co):
            if label not in out:
                out.append(label)
    return out


def slowdown_matrix(table: pd.DataFrame, mode: str, labels: list[str] | None = None) -> tuple[list[str], np.ndarray]:
    """(labels, matrix) of one mode: matrix[i, j] = slowdown of tenant labels[i] next to labels[j]
    (the diagonal: sharing with itself); NaN where no mix measured the pair.  Of two rows for one cell
    (two files, or a mix given in either order) the first counts."""
    labels = labels if labels is not None else tenant_order(table)
    grid = np.full((len(labels), len(labels)), np.nan)
    pairs = table[(table["mode"] == mode) & table["kind"].isin(["mix", "self"])]
    for victim, co, value in zip(pairs["victim"], pairs["co_runner"], pairs["slowdown"]):
        if victim in labels and co in labels:
            i, j = labels.index(victim), labels.index(co)
            if np.isnan(grid[i, j]):
                grid[i, j] = value
    return labels, grid


def slowdown_matrices(table: pd.DataFrame) -> dict[str, tuple[list[str], np.ndarray]]:
    """One matrix per mode (display order), all over the same tenant labels so that panels line up."""
    labels = tenant_order(table)
    modes = sorted(set(table.loc[table["kind"].isin(["mix", "self"]), "mode"]), key=mode_sort_key)
    return {mode: slowdown_matrix(table, mode, labels) for mode in modes}


def table_columns() -> list[Column]:
    """How the slowdown table is shown (CSV and JSON get the raw keys)."""
    def kind(value: str, row: pd.Series) -> str:
        return {"self": "itself", "mix": "mix", "mix-n": "mix"}.get(value, value)

    return [
        Column("mode", "mode", left=True),
        Column("victim", "tenant", left=True),
        Column("co_runner", "sharing with", left=True),
        Column("kind", "as", kind, left=True),
        Column("slowdown", "slowdown", lambda v, r: format_number(v, 2)),
        Column("alone", "alone", lambda v, r: format_si(v, r["unit"])),
        Column("shared", "sharing", lambda v, r: format_si(v, r["unit"])),
        Column("latency_p99_ratio", "p99 ratio", lambda v, r: format_number(v, 2)),
    ]


#: The line under the slowdown table.
LEGEND = ("slowdown = the tenant's throughput alone (its own ranks per GPU, same mode and file) / its throughput "
          "when sharing; above 1 = slower when sharing. as itself: next to ranks of its own kind, the homogeneous "
          "record at the mix's total ranks per GPU scaled to the tenant's share (ranks / total). p99 ratio: p99 "
          "latency when sharing / alone")
