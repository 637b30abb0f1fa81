"""One self-contained HTML page per run: context, summary, crossover, plots.

Figures are embedded as base64 PNG so the page can be attached to a CI job
or mailed without its directory; nothing is fetched when it is opened.
"""

from __future__ import annotations

import base64
import html
import io
from typing import Any

import matplotlib.pyplot as plt

from .crossover import crossovers, table_columns as crossover_columns
from .errors import AnalysisError
from .loader import ResultSet
from .plots import all_figures
from .summary import columns as summary_columns, summarize
from .tables import render_html

_CSS = """
body { font-family: system-ui, sans-serif; margin: 2em auto; max-width: 1200px; color: #222; }
h1 { font-size: 1.6em; } h2 { border-bottom: 1px solid #ccc; padding-bottom: .2em; margin-top: 2em; }
table { border-collapse: collapse; margin: .5em 0 1.5em; font-size: .9em; }
th, td { border: 1px solid #ddd; padding: .25em .6em; } th { background: #f3f3f3; }
td.r { text-align: right; font-variant-numeric: tabular-nums; } td.l { text-align: left; }
dl { display: grid; grid-template-columns: max-content auto; gap: .2em 1em; }
dt { font-weight: 600; } dd { margin: 0; } img { max-width: 100%; margin: .5em 0 1.5em; }
.verdict { font-weight: 600; } .note { color: #666; }
"""


def _esc(value: Any) -> str:
    return html.escape(str(value))


def _context_html(name: str, c: dict[str, Any]) -> str:
    gpus = ", ".join(sorted({f"{g['name']} ({g['sm_count']} SMs)" for g in c["gpus"]})) or "none (CPU device)"
    rows = [
        ("file", name), ("date (UTC)", c["date_utc"]),
        ("mpsbench", f"{c['version']}, git {c['git_commit'][:12]}{' (dirty)' if c['git_dirty'] else ''}"),
        ("hosts", ", ".join(c["hosts"])), ("GPUs", gpus),
        ("device", f"{c['device']['used']} (requested {c['device']['requested']})"
         + (f": {c['device']['note']}" if c["device"]["note"] else "")),
        ("MPI", f"{c['mpi']['library_version']}; {c['mpi']['world_size']} ranks"),
        ("CUDA", f"driver {c['cuda']['driver_version']}, runtime {c['cuda']['runtime_version']}, "
                 f"cuBLAS {c['cuda']['cublas_version']}"),
        ("settings", f"min time {c['settings']['min_time_s']} s x {c['settings']['repetitions']} repetitions, "
                     f"seed {c['settings']['seed']}"),
        ("command", " ".join(c["argv"])),
    ]
    return "<dl>" + "".join(f"<dt>{_esc(k)}</dt><dd>{_esc(v)}</dd>" for k, v in rows) + "</dl>"


def _figure_html(fig: Any, alt: str) -> str:
    buffer = io.BytesIO()
    fig.savefig(buffer, format="png", dpi=100)
    data = base64.b64encode(buffer.getvalue()).decode("ascii")
    return f'<img alt="{_esc(alt)}" src="data:image/png;base64,{data}">'


def _crossover_html(rs: ResultSet, threshold: float) -> str:
    try:
        found = crossovers(rs, threshold)
    except AnalysisError as exc:
        return f'<p class="note">No crossover: {_esc(exc.detail)}.</p>'
    parts = [f'<p class="note">Crossover = smallest measured size S with gain &lt; {threshold:g} at every '
             f'measured size &ge; S (gain = mps / timeslice throughput).</p>']
    for c in found:
        parts.append(f"<h3>{_esc(c.kernel)} {_esc(c.precision)}, {c.ranks_per_gpu} ranks per GPU</h3>"
                     f'<p class="verdict">{_esc(c.message)}</p>{render_html(c.table, crossover_columns(c))}')
    return "".join(parts)


def build_report(rs: ResultSet, threshold: float = 1.1) -> str:
    """The HTML text of the report for everything in ``rs``."""
    summary = summarize(rs)
    sections = ["<h2>Context</h2>"] + [_context_html(n, c) for n, c in rs.contexts.items()]
    sections.append("<h2>Summary</h2>")
    sections.append('<p class="note">vs timeslice: throughput / timeslice throughput of the same configuration '
                    "(on mps rows: the MPS gain). Efficiency: throughput / best single-rank throughput of the "
                    "kernel, precision and mode. Fairness: Jain index over the ranks (1 = equal shares).</p>")
    for (kernel, precision), group in summary.groupby(["kernel", "precision"], sort=False):
        sections.append(f"<h3>{_esc(kernel)} {_esc(precision)}</h3>{render_html(group, summary_columns())}")
    sections.append("<h2>When does MPS pay off?</h2>" + _crossover_html(rs, threshold))
    sections.append("<h2>Plots</h2>")
    for stem, fig in all_figures(rs):
        try:
            sections.append(_figure_html(fig, stem))
        finally:
            plt.close(fig)
    title = "mpsbench report: " + ", ".join(sorted({c["date_utc"] for c in rs.contexts.values()}))
    return (f'<!DOCTYPE html>\n<html lang="en"><head><meta charset="utf-8"><title>{_esc(title)}</title>'
            f"<style>{_CSS}</style></head><body><h1>{_esc(title)}</h1>\n" + "\n".join(sections)
            + "\n</body></html>\n")
