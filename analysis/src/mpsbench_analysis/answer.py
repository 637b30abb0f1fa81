"""The one table that answers the question, the first thing the report shows.

One row per line of the verdict (core verdict_items: per kernel and precision, per farmed program, per mix,
in the order the sweep prints them), with the sentence exactly as the console says it and, beside it, what
a reader scans for:
  best       kernels: the fewest ranks per GPU within noise of mps's fastest, by size ("8 at 512-1024, 2 at 2048");
             the MPS gain is against timeslice's best, which may be at other ranks per GPU;
             applications: the best mode and copies per GPU; mixes: the mode that protects the latency
             tenant (every tenant within the mix verdict's limit), or "none within 1.5x"
  MPS gain   mps / timeslice there: its range over the sizes; an application's best against timeslice at its
             copies per GPU
  crossover  the range where MPS stops (kernels: sizes) or starts (applications: copies per GPU) paying off,
             where the intervals place one
  energy     mps / timeslice energy per unit of work at the largest gain that has it ("0.62x J/TFLOP")
"""

from __future__ import annotations

import html
from typing import Any

from mpsbench_core.energy import energy_ratio, per_unit_label
from mpsbench_core.mix import MixVerdict
from mpsbench_core.verdict import AppVerdict, KernelVerdict, Verdict, verdict_items

#: The table's columns: (header, class of its cells).
HEADERS = (("what", "l"), ("best", "l"), ("MPS gain", "r"), ("crossover", "l"), ("energy", "r"), ("verdict", "l"))

#: What the columns mean, under the table.
LEGEND = ("best: the fewest ranks per GPU within noise of mps's fastest at each size (kernels), the best mode and "
          "copies per GPU (applications), the mode that keeps every tenant within {limit:g}x of alone (mixes); MPS "
          "gain: mps / timeslice there (applications: with its 95% interval); crossover: between which sizes MPS "
          "stops paying off (kernels), between which copies per GPU it starts (applications), where the 95% "
          "intervals place it; energy: mps / timeslice energy per unit of work, at the largest "
          "gain measured with energy; verdict: the sentence mpsbench-sweep and mpsbench-analyze verdict print.")


def _ranges(points: tuple[Any, ...]) -> str:
    """'8 at 512-1024, 2 at 2048': each best k with the sizes it holds for; '8' when it holds for all."""
    groups: list[list[Any]] = []
    for p in points:
        if groups and groups[-1][0].k == p.k:
            groups[-1].append(p)
        else:
            groups.append([p])
    if len(groups) == 1:
        return str(points[0].k)
    return ", ".join(f"{g[0].k} at {g[0].at}" + (f"-{g[-1].at}" if len(g) > 1 else "") for g in groups)


def _gains(points: tuple[Any, ...]) -> str:
    gains = [p.gain for p in points]
    low, high = min(gains), max(gains)
    return f"{low:.2f}x" if f"{low:.2f}" == f"{high:.2f}" else f"{low:.2f}x-{high:.2f}x"


def _energy(points: tuple[Any, ...]) -> str:
    metered = [p for p in points if p.energy_ratio is not None]
    if not metered:
        return "-"
    top = max(metered, key=lambda p: p.gain)
    return f"{top.energy_ratio:.2f}x {per_unit_label(top.mps_energy.unit)[1]}"


def _crossover(outcome: str, between: tuple[int, int] | None, axis: str) -> str:
    """The crossover cell: a range where the intervals place one, else what the outcome says."""
    if between is not None:
        return f"between {between[0]} and {between[1]}" + ("" if axis == "size" else " copies/GPU")
    return {"every": "none: pays off throughout", "never": "none: never pays off", "unclear": "cannot tell",
            "mixed": "no single crossover", "none": "-"}.get(outcome, "-")


def _kernel(v: KernelVerdict) -> tuple[str, str, str, str]:
    if not v.points:
        return "-", "-", "-", "-"
    crossover = _crossover(v.outcome, v.between, "size")
    return _ranges(v.points), _gains(v.points), crossover, _energy(v.points)


def _app(v: AppVerdict) -> tuple[str, str, str, str]:
    if v.best is None:
        return "-", "-", "-", "-"
    b = v.best.representative
    best = f"{b.mode_label}, {b.ranks_per_gpu} cop{'y' if b.ranks_per_gpu == 1 else 'ies'}/GPU"
    gain = f"{v.timeslice.point:.2f}x [{v.timeslice.text}]" if v.timeslice is not None else "-"
    crossover = _crossover(v.outcome, v.between, "copies")
    ratio = energy_ratio(b.energy, v.timeslice_energy) if v.timeslice is not None else None
    energy = f"{ratio:.2f}x {per_unit_label(b.energy.unit)[1]}" if ratio is not None else "-"
    return best, gain, crossover, energy


def _mix(v: MixVerdict) -> tuple[str, str, str, str]:
    p = v.protector
    cost = p.cost(v.focus) if p is not None else None
    best = p.phrase if cost is not None and cost <= v.limit else f"none within {v.limit:g}x" if v.modes else "-"
    return best, "-", "-", "-"


def answer_rows(found: list[Verdict]) -> list[tuple[str, ...]]:
    """(what, best, MPS gain, crossover, energy, verdict) per verdict line (module doc)."""
    rows = []
    for subject, sentence, stands_for in verdict_items(found):
        v = stands_for[0] if len(stands_for) == 1 else None
        cells = (_kernel(v) if isinstance(v, KernelVerdict) else _app(v) if isinstance(v, AppVerdict)
                 else _mix(v) if isinstance(v, MixVerdict) else ("-", "-", "-", "-"))
        rows.append((subject, *cells, sentence))
    return rows


def answer_html(found: list[Verdict], limit: float) -> str:
    """The table (its verdict cells of class ``verdict``) and its legend; a column no row fills is left out."""
    rows = answer_rows(found)
    shown = [i for i, (h, _) in enumerate(HEADERS) if h in ("what", "verdict") or any(r[i] != "-" for r in rows)]
    head = "".join(f"<th>{html.escape(HEADERS[i][0])}</th>" for i in shown)
    body = []
    for row in rows:
        cells = []
        for (header, align), value in (zip([HEADERS[i] for i in shown], [row[i] for i in shown])):
            cls = {"what": f"{align} what", "verdict": f"{align} verdict"}.get(header, align)
            text = html.escape(value)
            if header == "what":  # break a long subject (a mix's spec, params) after its commas and slashes
                text = text.replace(",", ",<wbr>").replace("/", "/<wbr>")
            cells.append(f'<td class="{cls}">{text}</td>')
        body.append(f"<tr>{''.join(cells)}</tr>")
    return (f'<div class="scroll"><table class="answer"><thead><tr>{head}</tr></thead>'
            f"<tbody>{''.join(body)}</tbody></table></div>"
            f'<p class="note">{html.escape(LEGEND.format(limit=limit))}</p>')
