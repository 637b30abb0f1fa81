"""One self-contained HTML page per run: the answer, context, the gains behind the verdict, plots, summary.

The answer comes first, one table (answer.py): per kernel and precision, farmed program and mix, the best
ranks per GPU, the MPS gain, the crossover, the energy side and the verdict sentence, the same sentences
``mpsbench-analyze verdict`` and mpsbench-sweep print, made from the same verdict objects (verdicts.py,
core's one definition); then the context (the sweep command that made the file), the tables of gains
behind each verdict (crossover.py), the figures (energy per unit of work and SM activity among them where
the results have them) and the summary.

Figures are embedded as base64 PNG so the page can be attached to a CI job
or mailed without its directory; nothing is fetched when it is opened, and
the page has no script.  It is read on screens of any width (wide tables
scroll inside their box, long command lines wrap) and printed (print CSS:
A4, no figure or table row split across pages, no figure taller than a
page, headings kept with what follows them).  The modes' key uses the
colours, markers and line styles of the figures (core modes.style).  Figures
are made, embedded and closed one at a time.
tests/test_report_browser.py opens the page in headless Chromium and checks
all of this as a reader's browser does.
"""

from __future__ import annotations

import base64
import html
import io
import shlex
from collections import Counter
from typing import Any

import matplotlib.pyplot as plt

from mpsbench_core.aa_check import aa_check
from mpsbench_core.mix import PROTECTED
from mpsbench_core.modes import sort_key as mode_sort_key, style as mode_style

from .answer import answer_html
from .energy import unavailable_note
from .crossover import all_crossovers
from .crossover_text import table_columns as crossover_columns
from .errors import AnalysisError
from .figure_layout import figure_title, stem_part_text
from .loader import ResultSet
from .plots import figure_makers
from .slowdown import LEGEND as SLOWDOWN_LEGEND, slowdown_table, table_columns as slowdown_columns
from .summary import columns as summary_columns, summarize
from .tables import render_html
from .verdicts import file_verdicts, threshold_for

#: Resolution of the embedded figures (their pixels are shown 1:1 on a 96 dpi screen, scaled down when narrower).
FIGURE_DPI = 100

_CSS = """
:root { color-scheme: light; }
body { font-family: system-ui, sans-serif; margin: 2em auto; padding: 0 1em; max-width: 1200px; color: #222;
       background: #fff; line-height: 1.35; }
h1 { font-size: 1.6em; margin-bottom: .2em; } .lead { color: #444; margin-top: 0; }
h2 { border-bottom: 1px solid #ccc; padding-bottom: .2em; margin-top: 2em; }
nav { font-size: .95em; } nav a { margin-right: 1.2em; }
.scroll { overflow-x: auto; max-width: 100%; }
table { border-collapse: collapse; margin: .5em 0 1.5em; font-size: .85em; }
th, td { border: 1px solid #ddd; padding: .25em .5em; } td { white-space: nowrap; }
th { background: #f3f3f3; vertical-align: bottom; }
td.r { text-align: right; font-variant-numeric: tabular-nums; } td.l { text-align: left; }
table.answer { font-size: .9em; width: 100%; } table.answer td { vertical-align: top; }
table.answer td.l { white-space: normal; max-width: 12em; } table.answer td.r { white-space: nowrap; }
table.answer td.verdict { white-space: normal; min-width: 28em; max-width: none; }
table.answer td.what { white-space: normal; min-width: 8em; max-width: 16em; }
dl { display: grid; grid-template-columns: max-content minmax(0, 1fr); gap: .2em 1em; }
dt { font-weight: 600; } dd { margin: 0; overflow-wrap: anywhere; }
figure { margin: 1em 0 2em; } figure img { display: block; max-width: 100%; height: auto; }
figcaption { color: #555; font-size: .85em; margin-top: .3em; }
ul.modes { list-style: none; padding: 0; display: flex; flex-wrap: wrap; gap: .3em 1.5em; }
ul.modes li { display: flex; align-items: center; gap: .4em; } ul.modes svg { flex: none; }
.note { color: #666; } td.what { font-weight: 600; }
@page { size: A4; margin: 12mm; }
@media print {
  body { max-width: none; margin: 0; padding: 0; font-size: 10pt; }
  nav { display: none; }
  h2, h3 { break-after: avoid; page-break-after: avoid; }
  #plots, #summary { break-before: page; page-break-before: always; }
  figure, tr, dl, ul.modes { break-inside: avoid; page-break-inside: avoid; }
  figure img { max-height: 240mm; width: auto; }
  .scroll { overflow: visible; }
  table { font-size: 7pt; } th, td { padding: .1em .2em; } td { white-space: normal; }
  thead { display: table-header-group; }
  table.answer td.verdict { min-width: 0; } table.answer td.what { min-width: 0; }
  a { color: inherit; text-decoration: none; }
}
"""

# SVG shapes for the markers of styles.py, centred on (0, 0), about 8 px across.
_MARKERS = {
    "o": '<circle r="4"/>',
    "s": '<rect x="-3.6" y="-3.6" width="7.2" height="7.2"/>',
    "^": '<polygon points="0,-4.5 4.2,3.3 -4.2,3.3"/>',
    "v": '<polygon points="0,4.5 4.2,-3.3 -4.2,-3.3"/>',
    "<": '<polygon points="-4.5,0 3.3,4.2 3.3,-4.2"/>',
    ">": '<polygon points="4.5,0 -3.3,4.2 -3.3,-4.2"/>',
    "D": '<polygon points="0,-4.6 4.6,0 0,4.6 -4.6,0"/>',
    "X": '<path d="M-4,-2.5L-2.5,-4L0,-1.5L2.5,-4L4,-2.5L1.5,0L4,2.5L2.5,4L0,1.5L-2.5,4L-4,2.5L-1.5,0Z"/>',
    "P": '<path d="M-1.5,-4.5H1.5V-1.5H4.5V1.5H1.5V4.5H-1.5V1.5H-4.5V-1.5H-1.5Z"/>',
    "p": '<polygon points="0,-4.5 4.3,-1.4 2.6,3.6 -2.6,3.6 -4.3,-1.4"/>',
    "h": '<polygon points="0,-4.5 3.9,-2.25 3.9,2.25 0,4.5 -3.9,2.25 -3.9,-2.25"/>',
    "*": '<polygon points="0,-5 1.2,-1.6 4.8,-1.5 1.9,0.6 2.9,4 0,2 -2.9,4 -1.9,0.6 -4.8,-1.5 -1.2,-1.6"/>',
}


def _esc(value: Any) -> str:
    return html.escape(str(value))


def _gpus(c: dict[str, Any]) -> str:
    """'2 × NVIDIA H100 80GB HBM3 (132 SMs)': how many of each model."""
    models = Counter(f"{g['name']} ({g['sm_count']} SMs)" for g in c["gpus"])
    return ", ".join(f"{n} × {model}" for model, n in sorted(models.items())) or "none (CPU device)"


def _extra_settings(c: dict[str, Any]) -> str:
    """'; allreduce 1048576 B after every iteration; mix matmul:2,inference:2' where the run had them."""
    out = ""
    nbytes = (c.get("settings") or {}).get("allreduce_bytes")
    if nbytes:
        out += f"; MPI_Allreduce of {nbytes} B after every iteration"
    if c.get("mix"):
        out += f"; mix {c['mix']}"
    return out


def command(c: dict[str, Any]) -> str:
    """The command that made the file: the sweep's (``context.sweep.command``, shell-quoted as typed; files of
    older sweeps: ``context.sweep.argv`` quoted), else mpsbench's own ``argv`` (a file of mpsbench alone)."""
    sweep = c.get("sweep") if isinstance(c.get("sweep"), dict) else {}
    if isinstance(sweep.get("command"), str) and sweep["command"].strip():
        return sweep["command"]
    argv = sweep.get("argv")
    if isinstance(argv, list) and argv and all(isinstance(a, str) for a in argv):
        return shlex.join(argv)
    return shlex.join(str(a) for a in c["argv"])


def _context_html(name: str, c: dict[str, Any]) -> str:
    rows = [
        ("file", name), ("date (UTC)", c["date_utc"]),
        ("mpsbench", f"{c['version']}, git {c['git_commit'][:12]}{' (dirty)' if c['git_dirty'] else ''}"),
        ("hosts", ", ".join(c["hosts"])), ("GPUs", _gpus(c)),
        ("device", f"{c['device']['used']} (requested {c['device']['requested']})"
         + (f": {c['device']['note']}" if c["device"]["note"] else "")),
        ("MPI", f"{c['mpi']['library_version']}; {c['mpi']['world_size']} ranks"),
        ("CUDA", f"driver {c['cuda']['driver_version']}, runtime {c['cuda']['runtime_version']}, "
                 f"cuBLAS {c['cuda']['cublas_version']}"),
        ("settings", f"min time {c['settings']['min_time_s']} s x {c['settings']['repetitions']} repetitions, "
                     f"seed {c['settings']['seed']}" + _extra_settings(c)),
        ("command", command(c)),
    ]
    return '<dl class="context">' + "".join(f"<dt>{_esc(k)}</dt><dd>{_esc(v)}</dd>" for k, v in rows) + "</dl>"


def _table(df: Any, columns: Any) -> str:
    """A table that scrolls inside its own box on a narrow screen instead of widening the page."""
    return f'<div class="scroll">{render_html(df, columns)}</div>'


def _figure_html(stem: str, fig: Any) -> str:
    buffer = io.BytesIO()
    fig.savefig(buffer, format="png", dpi=FIGURE_DPI)
    data = base64.b64encode(buffer.getvalue()).decode("ascii")
    title = figure_title(fig) or stem
    return (f'<figure id="{_esc(stem)}"><img alt="{_esc(title)}" src="data:image/png;base64,{data}">'
            f"<figcaption>{_esc(stem)}.png (mpsbench-analyze plot)</figcaption></figure>")


def _mode_key(labels: list[str]) -> str:
    """The modes as the figures draw them: colour, line style, marker."""
    items = []
    for label in labels:
        s = mode_style(label)
        dash = f' stroke-dasharray="{s.dash_css}"' if s.dash_css else ""
        marker = _MARKERS.get(s.marker, _MARKERS["o"])
        items.append(
            f'<li data-mode="{_esc(label)}" data-color="{s.color}">'
            f'<svg width="40" height="14" viewBox="-20 -7 40 14" aria-hidden="true">'
            f'<line x1="-19" y1="0" x2="19" y2="0" stroke="{s.color}" stroke-width="2"{dash}/>'
            f'<g fill="{s.color}">{marker}</g></svg>{_esc(label)}</li>')
    return '<ul class="modes" aria-label="modes">' + "".join(items) + "</ul>"


def _answer_html(rs: ResultSet, threshold: float) -> str:
    """The answer table (answer.py): one row per verdict line, the sentence as the console says it."""
    found = file_verdicts(rs, threshold)
    if not found:
        return '<p class="note">No verdict: the files hold no kernel, application or mix result.</p>'
    aa = aa_check(rs.records()).line
    return (f'<p class="note">MPS pays off where the 95% interval of its gain over timeslice lies above {threshold:g}x, '
            "does not where it lies below, and the data cannot tell otherwise; at each size the best of mps (the fewest "
            "ranks per GPU within noise of its fastest) against the best of timeslice (mpsbench-analyze verdict prints "
            "these sentences).</p>"
            + answer_html(found, PROTECTED) + (f'<p class="aa">{_esc(aa)}</p>' if aa else ""))


def _crossover_html(rs: ResultSet, threshold: float) -> str:
    try:
        found = all_crossovers(rs, threshold)
    except AnalysisError as exc:
        return f'<p class="note">No gains to show: {_esc(exc.detail)}.</p>'
    parts = []
    for c in found:
        table = _table(c.table, crossover_columns(c)) if len(c.table) else ""
        parts.append(f"<h3>{_esc(c.title)}</h3><p>{_esc(c.message)}</p>{table}")
    return "".join(parts)


def _lead(rs: ResultSet) -> str:
    """One line under the title: the GPUs, the modes and how many results."""
    gpus = sorted({_gpus(c) for c in rs.contexts.values()})
    modes = sorted(set(rs.results["mode_label"]), key=mode_sort_key)
    failed = int((rs.results["status"] != "ok").sum())
    counts = f"{len(rs.results)} results" + (f", {failed} failed" if failed else "")
    return f'<p class="lead">{_esc("; ".join(gpus))} · modes {_esc(", ".join(modes))} · {counts}</p>'


def build_report(rs: ResultSet, threshold: float | None = None) -> str:
    """The HTML text of the report for everything in ``rs``; ``threshold``: the gain that pays off (default:
    the one the run recorded, verdicts.py)."""
    threshold = threshold_for(rs, threshold)
    summary = summarize(rs)
    modes = sorted(set(rs.results["mode_label"]), key=mode_sort_key)
    sections = ['<nav><a href="#verdict">Answer</a><a href="#context">Context</a>'
                '<a href="#crossover">Gains behind the verdict</a><a href="#plots">Plots</a>'
                '<a href="#summary">Summary</a></nav>']
    sections.append('<section id="verdict"><h2>Does MPS pay off?</h2>' + _answer_html(rs, threshold) + "</section>")
    sections.append('<section id="context"><h2>Context</h2>'
                    + "".join(_context_html(n, c) for n, c in rs.contexts.items()) + "</section>")
    sections.append('<section id="crossover"><h2>The gains behind the verdict</h2>' + _crossover_html(rs, threshold)
                    + "</section>")
    plots = ['<section id="plots"><h2>Plots</h2><p class="note">Throughput is the aggregate over all GPUs of a '
             "run (the count is in each title); each mode has one colour, line style and marker:</p>",
             _mode_key(modes)]
    current = None
    for stem, make in figure_makers(rs):
        fig = make()
        try:
            group = stem.split("_")[1:3]  # kernel and precision (an application: app, its name); mix
            if group != current:
                current = group
                title = "mixed tenants" if group == ["mix"] else " ".join(stem_part_text(p) for p in group)
                plots.append(f"<h3>{_esc(title)}</h3>")
            plots.append(_figure_html(stem, fig))
        finally:
            plt.close(fig)
    sections.append("".join(plots) + "</section>")
    summary_html = ['<section id="summary"><h2>Summary</h2>',
                    '<p class="note">vs timeslice: throughput / timeslice throughput of the same configuration '
                    "(on mps rows: the MPS gain). Efficiency: throughput / best single-rank throughput of the "
                    "kernel, precision and mode. Fairness: Jain index over the ranks (1 = equal shares)."
                    + (" p50/p95/p99 latency: percentiles of every request of every rank (host clock, linear "
                       "interpolation)." if summary["latency_p99_s"].notna().any() else "")
                    + (" Kernel time and allreduce: per iteration, the median over the ranks; allreduce share: "
                       "of the iteration." if summary["collective_time_per_iteration_s"].notna().any() else "")
                    + (" " + unavailable_note(summary) if unavailable_note(summary) else "") + "</p>"]
    # kernel, precision and params are the heading of each table, not columns repeating it (screen and print width)
    for (kernel, precision, params), group in summary.groupby(["kernel", "precision", "params"], sort=False):
        # per table: the latency, collective, energy and activity columns only where its rows have them
        columns = [c for c in summary_columns(group) if c.key not in ("kernel", "precision", "params")]
        title = f"{kernel} {precision}" + (f" ({params})" if params else "")
        summary_html.append(f"<h3>{_esc(title)}</h3>{_table(group, columns)}")
    slowdown = slowdown_table(rs)
    if not slowdown.empty:
        summary_html.append(f'<h3 id="slowdown">Slowdown of mixed tenants</h3><p class="note">{_esc(SLOWDOWN_LEGEND)}'
                            f"</p>{_table(slowdown, slowdown_columns())}")
    sections.append("".join(summary_html) + "</section>")
    title = "mpsbench report: " + ", ".join(sorted({c["date_utc"] for c in rs.contexts.values()}))
    return (f'<!DOCTYPE html>\n<html lang="en"><head><meta charset="utf-8">'
            f'<meta name="viewport" content="width=device-width, initial-scale=1">'
            f"<title>{_esc(title)}</title><style>{_CSS}</style></head>"
            f"<body><h1>{_esc(title)}</h1>{_lead(rs)}\n" + "\n".join(sections) + "\n</body></html>\n")
