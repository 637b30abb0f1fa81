"""When should I use MPS?  The problem size above which it stops paying off,
and for applications without a size, the copies per GPU from which it pays off.

Sizes (kernels): for each kernel and precision, at one ranks-per-GPU count
(the largest one measured in both modes, or the one asked for), the MPS gain
is gain(S) = throughput(mps, S) / throughput(timeslice, S).  MPS "pays off"
at S when gain(S) >= threshold.  The crossover is the smallest measured size
S such that gain(S') < threshold for every measured S' >= S: from there on
MPS never pays off again.  Three outcomes:
  * the gain at the largest size pays off -> no crossover ("every measured
    size" when no size falls short, else "still pays off at the largest");
  * the crossover is the smallest size -> MPS "never" pays off;
  * otherwise MPS pays off below the crossover size.

Copies per GPU (kernel ``app`` records, which have no size): the gain at k
copies per GPU is gain(k) = throughput(mps, k) / throughput(timeslice, k),
and the crossover is the smallest measured k such that gain(k') >= threshold
for every measured k' >= k: from there on MPS keeps paying off.  Outcomes:
  * "every": gain >= threshold at every measured k;
  * "from": it pays off from k on, and the largest k where it is still
    below is the measured count just under k;
  * "never": gain < threshold at every measured k;
  * "largest": some k pays off but the largest measured k does not (no k
    from which it stays paid off).

``mode`` names a mode label (``mps``, ``mps-qos:50%``) or, without a
percentage, every label of that mode (``mps-qos`` matches ``mps-qos:50%``
and ``mps-qos:25%``): a size crossover is then given per label; an
app's series across k takes the one label at each k (mpsbench-sweep gives
mps-qos 100/k percent at k copies), or is given per label when some k has
several.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any, Union

import pandas as pd

from .errors import AnalysisError
from .loader import MIX_KERNEL, ResultSet, mode_sort_key
from .summary import gain_table
from .tables import Column, json_records, json_value, render
from mpsbench_core.units import format_number, format_si


@dataclass
class Crossover:
    """The size answer for one kernel and precision, with the gains behind it."""

    kernel: str
    precision: str
    ranks_per_gpu: int
    threshold: float
    mode: str
    table: pd.DataFrame  # size, <mode>, timeslice, unit, gain, pays_off
    size: int | None  # the crossover size; None when MPS pays off at the largest size
    outcome: str  # "every", "largest", "never", "below"
    params: str = ""  # the kernel's parameters (params_text), "" for none

    axis = "size"

    @property
    def title(self) -> str:
        mode = "" if self.mode == "mps" else f", {self.mode}"
        params = f" ({self.params})" if self.params else ""
        return f"{self.kernel} {self.precision}{params}, {self.ranks_per_gpu} ranks per GPU{mode}"

    @property
    def message(self) -> str:
        t = f"{self.threshold:g}"
        sizes = list(self.table["size"])
        m = _mode_name(self.mode)
        if self.outcome == "every":
            return f"{m} pays off at every measured size (gain >= {t} from {sizes[0]} to {sizes[-1]})"
        if self.outcome == "largest":
            short = [s for s, ok in zip(sizes, self.table["pays_off"]) if not ok]
            return (f"no crossover: {m} still pays off at the largest measured size {sizes[-1]} "
                    f"(gain < {t} only at {', '.join(map(str, short))})")
        if self.outcome == "never":
            return f"{m} never pays off: gain < {t} at every measured size ({sizes[0]} to {sizes[-1]})"
        return (f"{m} stops paying off at size {self.size}: gain < {t} at every measured size >= {self.size}; "
                f"use {m} below {self.size}")

    def to_json(self) -> dict[str, Any]:
        return {"kernel": self.kernel, "precision": self.precision, "params": self.params, "mode": self.mode,
                "axis": self.axis,
                "threshold": self.threshold, "ranks_per_gpu": self.ranks_per_gpu, "crossover_size": self.size,
                "outcome": self.outcome, "message": self.message,
                "table": json_records(self.table, list(self.table.columns))}


@dataclass
class RanksCrossover:
    """The copies-per-GPU answer for one application (kernel app), with the gains behind it."""

    kernel: str
    precision: str
    threshold: float
    mode: str  # the mode asked for, or one label when a count has several
    table: pd.DataFrame  # ranks_per_gpu, mode_label, <mode>, timeslice, unit, gain, pays_off
    ranks: int | None  # the smallest k from which MPS pays off at every larger k; None: no such k
    below: int | None  # the largest k where the gain is still below the threshold; None: none
    outcome: str  # "every", "from", "never", "largest"

    axis = "ranks_per_gpu"

    @property
    def title(self) -> str:
        mode = "" if self.mode == "mps" else f", {self.mode}"
        return f"{self.kernel} {self.precision}, across copies per GPU{mode}"

    @property
    def message(self) -> str:
        t = f"{self.threshold:g}"
        ks = list(self.table["ranks_per_gpu"])
        m = _mode_name(self.mode)
        if self.outcome == "every":
            return (f"{m} pays off at every measured copies-per-GPU count (gain >= {t} from {ks[0]} to {ks[-1]} "
                    f"copies per GPU)")
        if self.outcome == "never":
            return f"{m} never pays off: gain < {t} at every measured count ({ks[0]} to {ks[-1]} copies per GPU)"
        if self.outcome == "largest":
            paying = [k for k, ok in zip(ks, self.table["pays_off"]) if ok]
            return (f"no crossover: {m} does not pay off at the largest measured count, {ks[-1]} copies per GPU "
                    f"(gain >= {t} only at {', '.join(map(str, paying))})")
        return (f"{m} pays off from {self.ranks} copies per GPU: gain >= {t} at every measured count >= "
                f"{self.ranks}, still below at {self.below}; use {m} with {self.ranks} or more copies per GPU")

    def to_json(self) -> dict[str, Any]:
        return {"kernel": self.kernel, "precision": self.precision, "mode": self.mode, "axis": self.axis,
                "threshold": self.threshold, "crossover_ranks_per_gpu": self.ranks,
                "below_ranks_per_gpu": self.below, "outcome": self.outcome, "message": self.message,
                "table": json_records(self.table, list(self.table.columns))}


AnyCrossover = Union[Crossover, RanksCrossover]


def _mode_name(mode: str) -> str:
    return mode.upper() if mode == "mps" else mode


def find_crossover(sizes: list[int], gains: list[float], threshold: float) -> tuple[int | None, str]:
    """(crossover size, outcome) for gains measured at ascending ``sizes``."""
    if not sizes:
        raise ValueError("no sizes")
    start = None
    for size, gain in zip(reversed(sizes), reversed(gains)):
        if gain < threshold:
            start = size
        else:
            break
    if start is None:
        return None, "every" if all(g >= threshold for g in gains) else "largest"
    return start, "never" if start == sizes[0] else "below"


def find_ranks_crossover(ranks: list[int], gains: list[float],
                         threshold: float) -> tuple[int | None, int | None, str]:
    """(k from which MPS pays off, largest k still below, outcome) for gains at ascending ``ranks``."""
    if not ranks:
        raise ValueError("no ranks")
    start = None
    for k, gain in zip(reversed(ranks), reversed(gains)):
        if gain >= threshold:
            start = k
        else:
            break
    if start is None:
        return None, ranks[-1], "never" if all(g < threshold for g in gains) else "largest"
    if start == ranks[0]:
        return start, None, "every"
    return start, ranks[ranks.index(start) - 1], "from"


def _matches(label: str, mode: str) -> bool:
    return label == mode or (":" not in mode and label.partition(":")[0] == mode)


def _gains(rs: ResultSet, mode: str) -> pd.DataFrame:
    """gain_table of every mode label ``mode`` stands for, with a ``mode_label`` column."""
    labels = sorted({m for m in rs.results["mode_label"] if _matches(m, mode) and m != "timeslice"},
                    key=mode_sort_key)
    # a mix (kernel "mix") has one configuration, no size to cross over: its tenants' slowdown says more
    frames = [gain_table(rs, label).rename(columns={label: "throughput_mode"}).assign(mode_label=label)
              for label in labels]
    frames = [f[f["kernel"] != MIX_KERNEL] for f in frames]
    frames = [f for f in frames if not f.empty]
    if not frames:
        have = ", ".join(sorted(set(rs.results["mode_label"])))
        raise AnalysisError(f"no configuration was measured in both mode {mode} and timeslice "
                            f"(modes present: {have})", ", ".join(rs.files))
    return pd.concat(frames, ignore_index=True)


def _size_crossovers(gains: pd.DataFrame, threshold: float, ranks: int | None, files: str) -> list[Crossover]:
    out = []
    for (kernel, precision, params, label), group in gains.groupby(["kernel", "precision", "params", "mode_label"],
                                                                   sort=False):
        chosen = ranks if ranks is not None else int(group["ranks_per_gpu"].max())
        rows = group[group["ranks_per_gpu"] == chosen].sort_values("size")
        if rows.empty:
            continue
        table = rows[["size", "throughput_mode", "timeslice", "unit", "gain"]].rename(
            columns={"throughput_mode": label}).reset_index(drop=True)
        table["pays_off"] = table["gain"] >= threshold
        size, outcome = find_crossover(list(table["size"]), list(table["gain"]), threshold)
        out.append(Crossover(kernel, precision, chosen, threshold, label, table, size, outcome, params))
    if not out:
        measured = sorted(set(gains["ranks_per_gpu"]))
        raise AnalysisError(f"no configuration at {ranks} ranks per GPU in both modes "
                            f"(measured: {', '.join(map(str, measured))})", files)
    return out


def _series(group: pd.DataFrame, mode: str) -> list[tuple[str, pd.DataFrame]]:
    """(name, rows) of the series across k: one when each k has one label, else one per label."""
    if group.groupby("ranks_per_gpu")["mode_label"].nunique().max() <= 1:
        labels = set(group["mode_label"])
        return [(labels.pop() if len(labels) == 1 else mode, group)]
    return [(label, rows) for label, rows in group.groupby("mode_label", sort=False)]


def ranks_crossovers(rs: ResultSet, threshold: float = 1.1, mode: str = "mps") -> list[RanksCrossover]:
    """One RanksCrossover per application (results without a size) measured in ``mode`` and timeslice.

    Raises AnalysisError when no result without a size was measured in both.
    """
    gains = _gains(rs, mode)
    gains = gains[gains["size"].isna()]
    if gains.empty:
        raise AnalysisError(f"no result without a problem size (kernel app) was measured in both mode {mode} "
                            "and timeslice", ", ".join(rs.files))
    out = []
    for (kernel, precision), group in gains.groupby(["kernel", "precision"], sort=False):
        for name, rows in _series(group, mode):
            rows = rows.sort_values("ranks_per_gpu")
            table = rows[["ranks_per_gpu", "mode_label", "throughput_mode", "timeslice", "unit", "gain"]].rename(
                columns={"throughput_mode": name}).reset_index(drop=True)
            table["pays_off"] = table["gain"] >= threshold
            k, below, outcome = find_ranks_crossover(list(table["ranks_per_gpu"]), list(table["gain"]), threshold)
            out.append(RanksCrossover(kernel, precision, threshold, name, table, k, below, outcome))
    return _ordered(out, rs)


def _ordered(found: list, rs: ResultSet) -> list:
    """Kernels and precisions in the order they first appear in the files (the order they ran in)."""
    first: dict[tuple, int] = {}
    for i, key in enumerate(zip(rs.results["kernel"], rs.results["precision"])):
        first.setdefault(key, i)
    return sorted(found, key=lambda c: first.get((c.kernel, c.precision), len(first)))


def crossovers(rs: ResultSet, threshold: float = 1.1, ranks: int | None = None,
               mode: str = "mps") -> list[Crossover]:
    """One size Crossover per kernel, precision (and mode label) that has ``mode`` and timeslice results.

    Raises AnalysisError when no kernel has both (nothing to answer), when
    only results without a size (kernel app: see :func:`ranks_crossovers`)
    have them, or when ``ranks`` was given and no kernel was measured at
    that count.
    """
    gains = _gains(rs, mode)
    gains = gains[gains["size"].notna()]
    if gains.empty:
        raise AnalysisError("no result has a problem size, and this crossover is a size (kernel app results "
                            "have none; theirs is across copies per GPU: mpsbench-analyze crossover)",
                            ", ".join(rs.files))
    return _ordered(_size_crossovers(gains, threshold, ranks, ", ".join(rs.files)), rs)


def all_crossovers(rs: ResultSet, threshold: float = 1.1, ranks: int | None = None,
                   mode: str = "mps") -> list[AnyCrossover]:
    """The size crossovers of the kernels, then the copies-per-GPU crossovers of the applications.

    ``ranks`` picks the ranks per GPU of the size crossovers only (an
    application's crossover spans every k).  Raises AnalysisError when
    neither kind has anything to answer, or as :func:`crossovers` does for
    the kernels.
    """
    gains = _gains(rs, mode)
    out: list[AnyCrossover] = []
    if gains["size"].notna().any():
        out += crossovers(rs, threshold, ranks, mode)
    if gains["size"].isna().any():
        out += ranks_crossovers(rs, threshold, mode)
    return out


def _k_header(c: RanksCrossover) -> str:
    return "copies/gpu" if c.kernel == "app" else "ranks/gpu"


def table_columns(c: AnyCrossover) -> list[Column]:
    """How a crossover's gain table is shown (either kind)."""
    tail = [
        Column("timeslice", "timeslice", lambda v, r: format_si(v, r["unit"])),
        Column("gain", "gain", lambda v, r: format_number(v, 3)),
        Column("pays_off", f"gain >= {c.threshold:g}", lambda v, r: "yes" if v else "no"),
    ]
    value = Column(c.mode, c.mode, lambda v, r: format_si(v, r["unit"]))
    if isinstance(c, RanksCrossover):
        label = [Column("mode_label", "mode", left=True)] if c.table["mode_label"].nunique() > 1 else []
        return [Column("ranks_per_gpu", _k_header(c)), *label, value, *tail]
    return [Column("size", "size"), value, *tail]


_CSV_KEYS = ["kernel", "precision", "ranks_per_gpu", "mode", "size", "throughput_mode", "timeslice", "unit",
             "gain", "pays_off", "threshold", "crossover_size", "outcome", "axis", "mode_label",
             "crossover_ranks_per_gpu", "below_ranks_per_gpu", "params"]


def flat_table(results: list[AnyCrossover]) -> pd.DataFrame:
    """All gains in one table (for CSV), the crossover repeated on each row.

    A size crossover's rows have its ``ranks_per_gpu`` and ``crossover_size``;
    an application's have each row's ``ranks_per_gpu``, no size, and
    ``crossover_ranks_per_gpu`` / ``below_ranks_per_gpu``.
    """
    frames = []
    for c in results:
        t = c.table.rename(columns={c.mode: "throughput_mode"})
        common = dict(kernel=c.kernel, precision=c.precision, mode=c.mode, threshold=c.threshold,
                      outcome=c.outcome, axis=c.axis, params=getattr(c, "params", ""))
        if isinstance(c, RanksCrossover):
            frames.append(t.assign(size=None, crossover_size=None, crossover_ranks_per_gpu=c.ranks,
                                   below_ranks_per_gpu=c.below, **common))
        else:
            frames.append(t.assign(ranks_per_gpu=c.ranks_per_gpu, crossover_size=c.size, mode_label=c.mode,
                                   crossover_ranks_per_gpu=None, below_ranks_per_gpu=None, **common))
    flat = pd.concat([f.astype(object) for f in frames], ignore_index=True)
    for column in ("size", "crossover_size", "crossover_ranks_per_gpu", "below_ranks_per_gpu", "ranks_per_gpu"):
        flat[column] = flat[column].astype("Int64")
    return flat[_CSV_KEYS]


def render_crossovers(results: list[AnyCrossover], fmt: str) -> str:
    """Verdict and gain table per kernel/precision (and application) in ``fmt``."""
    if fmt == "csv":
        return render(flat_table(results), [Column(k, k) for k in _CSV_KEYS], "csv")
    if fmt == "json":
        return json.dumps({"crossovers": [json_value(c.to_json()) for c in results]}, indent=1) + "\n"
    parts = []
    for c in results:
        if fmt == "markdown":
            parts.append(f"### {c.title}\n\n**{c.message}**\n\n{render(c.table, table_columns(c), 'markdown')}")
        else:
            parts.append(f"{c.title}\n  {c.message}\n\n{render(c.table, table_columns(c), 'table')}")
    return "\n".join(parts)
