"""When should I use MPS?  The problem size above which it stops paying off.

For each kernel and precision, at one ranks-per-GPU count (the largest one
measured in both modes, or the one asked for), the MPS gain is
gain(S) = throughput(mps, S) / throughput(timeslice, S).  MPS "pays off" at
S when gain(S) >= threshold.  The crossover is the smallest measured size
S such that gain(S') < threshold for every measured S' >= S: from there on
MPS never pays off again.  Three outcomes:
  * the gain at the largest size pays off -> no crossover ("every measured
    size" when no size falls short, else "still pays off at the largest");
  * the crossover is the smallest size -> MPS "never" pays off;
  * otherwise MPS pays off below the crossover size.
"""

from __future__ import annotations

from dataclasses import dataclass

import pandas as pd

from .errors import AnalysisError
from .loader import ResultSet
from .summary import gain_table, sort_rows
from .tables import Column, render
from .units import format_number, format_si


@dataclass
class Crossover:
    """The answer for one kernel and precision, with the gains behind it."""

    kernel: str
    precision: str
    ranks_per_gpu: int
    threshold: float
    mode: str
    table: pd.DataFrame  # size, <mode>, timeslice, unit, gain, pays_off
    size: int | None  # the crossover size; None when MPS pays off at the largest size
    outcome: str  # "every", "largest", "never", "below"

    @property
    def message(self) -> str:
        t = f"{self.threshold:g}"
        sizes = list(self.table["size"])
        m = self.mode.upper() if self.mode == "mps" else self.mode
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


def crossovers(rs: ResultSet, threshold: float = 1.1, ranks: int | None = None,
               mode: str = "mps") -> list[Crossover]:
    """One Crossover per kernel and precision that has ``mode`` and timeslice results.

    Raises AnalysisError when no kernel has both (nothing to answer), or
    when ``ranks`` was given and no kernel was measured at that count.
    """
    gains = gain_table(rs, mode)
    if gains.empty:
        have = ", ".join(sorted(set(rs.results["mode_label"])))
        raise AnalysisError(f"no configuration was measured in both mode {mode} and timeslice "
                            f"(modes present: {have})", ", ".join(rs.files))
    gains = gains[gains["size"].notna()]
    if gains.empty:
        raise AnalysisError("no result has a problem size, and a crossover is a size (kernel app results "
                            "have none)", ", ".join(rs.files))
    out = []
    for (kernel, precision), group in gains.groupby(["kernel", "precision"], sort=False):
        chosen = ranks if ranks is not None else int(group["ranks_per_gpu"].max())
        rows = group[group["ranks_per_gpu"] == chosen].sort_values("size")
        if rows.empty:
            continue
        table = rows[["size", mode, "timeslice", "unit", "gain"]].reset_index(drop=True)
        table["pays_off"] = table["gain"] >= threshold
        size, outcome = find_crossover(list(table["size"]), list(table["gain"]), threshold)
        out.append(Crossover(kernel, precision, chosen, threshold, mode, table, size, outcome))
    if not out:
        measured = sorted(set(gains["ranks_per_gpu"]))
        raise AnalysisError(f"no configuration at {ranks} ranks per GPU in both modes "
                            f"(measured: {', '.join(map(str, measured))})", ", ".join(rs.files))
    order = sort_rows(pd.DataFrame({"kernel": [c.kernel for c in out], "precision": [c.precision for c in out],
                                    "i": range(len(out))}), ["kernel", "precision"])
    return [out[i] for i in order["i"]]


def table_columns(c: Crossover) -> list[Column]:
    return [
        Column("size", "size"),
        Column(c.mode, c.mode, lambda v, r: format_si(v, r["unit"])),
        Column("timeslice", "timeslice", lambda v, r: format_si(v, r["unit"])),
        Column("gain", "gain", lambda v, r: format_number(v, 3)),
        Column("pays_off", f"gain >= {c.threshold:g}", lambda v, r: "yes" if v else "no"),
    ]


def flat_table(results: list[Crossover]) -> pd.DataFrame:
    """All gains in one table (for CSV), the crossover repeated on each row."""
    frames = []
    for c in results:
        t = c.table.rename(columns={c.mode: "throughput_mode"})
        frames.append(t.assign(kernel=c.kernel, precision=c.precision, ranks_per_gpu=c.ranks_per_gpu,
                               mode=c.mode, threshold=c.threshold, crossover_size=c.size, outcome=c.outcome))
    return pd.concat(frames, ignore_index=True)


def render_crossovers(results: list[Crossover], fmt: str) -> str:
    """Verdict and gain table per kernel/precision in ``fmt``."""
    if fmt == "csv":
        keys = ["kernel", "precision", "ranks_per_gpu", "mode", "size", "throughput_mode", "timeslice", "unit",
                "gain", "pays_off", "threshold", "crossover_size", "outcome"]
        return render(flat_table(results), [Column(k, k) for k in keys], "csv")
    parts = []
    for c in results:
        title = f"{c.kernel} {c.precision}, {c.ranks_per_gpu} ranks per GPU"
        if fmt == "markdown":
            parts.append(f"### {title}\n\n**{c.message}**\n\n{render(c.table, table_columns(c), 'markdown')}")
        else:
            parts.append(f"{title}\n  {c.message}\n\n{render(c.table, table_columns(c), 'table')}")
    return "\n".join(parts)
