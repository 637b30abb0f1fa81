"""Figures of kernels and applications: throughput vs ranks per GPU, MPS-gain heatmaps, per-rank times.

One figure per kernel and precision (and params, where a kernel has them; one per application), faceted by
size, so a sweep gives a handful of files rather than hundreds; a latency kernel adds one
latency-throughput figure per size (latency_plot.py), and files with a mix one slowdown heatmap with a
panel per mode (slowdown_plot.py).  Each facet picks its own SI prefix because sizes differ by orders of
magnitude; each mode has one colour, marker and line style everywhere (core modes.style).  Figures are
made one at a time (:func:`figure_makers`) and closed once written, so that a large sweep does not hold
every figure open at once.
"""

from __future__ import annotations

import io
import math
import random
from pathlib import Path
from typing import Callable

import numpy as np
from matplotlib.colors import TwoSlopeNorm, to_rgba
from matplotlib.figure import Figure
from matplotlib.legend_handler import HandlerTuple
from matplotlib.lines import Line2D
from matplotlib.patches import Patch

from mpsbench_core.modes import sort_key as mode_sort_key, style as mode_style
from mpsbench_core.units import prefix_for, prefixed_unit, time_scale

from .figure_layout import (BOX_ALPHA, at_size, device_word, devices_phrase, matplotlib, new_figure, nothing_to_plot,
                            plt, rank_axis, set_legend, set_title, size_title, sizes_of, slug, subject_name,
                            with_params)
from .energy_plot import activity_figure, activity_figure_possible, energy_figure, energy_figure_possible
from .latency_plot import latency_configs, latency_figure
from .loader import ResultSet
from .safe_write import OutputDirectory
from .slowdown_plot import slowdown_figure, slowdown_figure_possible
from .summary import gain_table, sort_rows
from .tables import own_unit


def _is_app(data) -> bool:
    """Whether the rows are an application's (runs, copies) rather than a kernel's (iterations, ranks)."""
    return "kind" in data and bool((data["kind"] == "app").any())


def throughput_figure(rs: ResultSet, kernel: str, precision: str, params: str | None = None) -> Figure:
    """Aggregate throughput (median, min-max bars) vs ranks per GPU, a line per mode, a facet per size."""
    r = with_params(rs.results, params)
    data = r[(r["kernel"] == kernel) & (r["precision"] == precision) & r["throughput"].notna()]
    name = subject_name(kernel, precision, params)
    if data.empty:
        fig, axes = new_figure(1, 6.0, 3.0)
        set_title(fig, f"{name}: aggregate throughput")
        return nothing_to_plot(fig, axes[0], "every result failed")
    sizes = sizes_of(data)
    modes = sorted(set(data["mode_label"]), key=mode_sort_key)
    word = device_word(data)
    devices, suffix = devices_phrase(data)
    fig, axes = new_figure(len(sizes), 4.8, 3.4, extra_height=1.4 + 0.25 * math.ceil(len(modes) / 3))
    handles: dict[str, object] = {}
    for ax, size in zip(axes, sizes):
        at = at_size(data, size)
        unit = at["primary_unit"].iloc[0]
        factor, prefix = (1.0, "") if own_unit(at["kind"].iloc[0], unit) else prefix_for(at["throughput_max"].max())
        for mode in modes:
            m = at[at["mode_label"] == mode].sort_values("ranks_per_gpu")
            if m.empty:
                continue
            y = m["throughput"] / factor
            err = [y - m["throughput_min"] / factor, m["throughput_max"] / factor - y]
            style = mode_style(mode)
            handles[mode] = ax.errorbar(m["ranks_per_gpu"], y, yerr=err, label=mode, capsize=3, linewidth=1.6,
                                        markersize=6, **style.line_kwargs)
        rank_axis(ax, sorted(set(at["ranks_per_gpu"])), word)
        ax.set_ylim(0, 1.1 * at["throughput_max"].max() / factor)
        ax.set_ylabel(f"aggregate throughput [{prefixed_unit(prefix, unit)}]")
        ax.set_title(size_title(size))
        ax.grid(True, alpha=0.3)
    labels = [m for m in modes if m in handles]
    set_legend(fig, [handles[m] for m in labels], [m + suffix.get(m, "") for m in labels])
    unit = data["primary_unit"].iloc[0]
    what = ("throughput" if not _is_app(data) else "completed runs per second" if not own_unit("app", unit)
            else f"the program's own figure ({unit})")
    set_title(fig, f"{name}: {what} vs ranks per {word}, aggregate over {devices}",
           "median of the repetitions; bars: min to max")
    return fig


def _gains(rs: ResultSet, kernel: str, precision: str, mode: str, params: str | None):
    g = with_params(gain_table(rs, mode), params)
    return g[(g["kernel"] == kernel) & (g["precision"] == precision)]


def gain_figure_possible(rs: ResultSet, kernel: str, precision: str, mode: str = "mps",
                         params: str | None = None) -> bool:
    """Whether some configuration was measured in both ``mode`` and timeslice (a gain to draw)."""
    return not _gains(rs, kernel, precision, mode, params).empty


def gain_figure(rs: ResultSet, kernel: str, precision: str, mode: str = "mps",
                params: str | None = None) -> Figure | None:
    """Heatmap of mode/timeslice throughput over size x ranks per GPU; None without data."""
    g = _gains(rs, kernel, precision, mode, params)
    if g.empty:
        return None
    r = with_params(rs.results, params)
    measured = r[(r["kernel"] == kernel) & (r["precision"] == precision) & r["mode_label"].isin([mode, "timeslice"])]
    devices, suffix = devices_phrase(measured)
    if suffix:  # e.g. timeslice on 1 GPU, mps on 2: say so in the title, there is no legend
        devices = ", ".join(f"{m}{s}" for m, s in suffix.items())
    word = device_word(measured)
    # every size and count either mode ran (a failed or missing configuration is a grey cell, not a gap)
    sizes = sizes_of(measured)
    ranks = sorted(set(measured["ranks_per_gpu"]))
    grid = np.full((len(sizes), len(ranks)), np.nan)
    for row in g.itertuples(index=False):
        grid[sizes.index(row.size), ranks.index(row.ranks_per_gpu)] = row.gain
    # symmetric in ratio around 1 so that x2 and x0.5 look equally strong
    lo, hi = np.nanmin(grid), np.nanmax(grid)
    span = max(hi, 1.0 / lo if lo > 0 else 2.0, 1.05)
    norm = TwoSlopeNorm(vcenter=1.0, vmin=min(lo, 1.0 / span), vmax=max(hi, span))
    fig = plt.figure(figsize=(max(6.0, 0.9 * len(ranks) + 3.4), max(3.8, 0.42 * len(sizes) + 2.8)),
                     layout="constrained")
    fig.get_layout_engine().set(w_pad=0.06, h_pad=0.06)
    ax = fig.add_subplot()
    cmap = matplotlib.colormaps["RdBu"].with_extremes(bad="#c8c8c8")  # grey: not measured in both modes
    image = ax.imshow(np.ma.masked_invalid(grid), cmap=cmap, norm=norm, aspect="auto", origin="lower")
    for i in range(len(sizes)):
        for j in range(len(ranks)):
            if np.isnan(grid[i, j]):  # said in words too: the grey is close to the palest gains
                ax.text(j, i, "n/a", ha="center", va="center", fontsize=9, color="#444444")
            else:
                strong = abs(norm(grid[i, j]) - 0.5) > 0.3
                ax.text(j, i, f"{grid[i, j]:.2f}", ha="center", va="center", fontsize=9,
                        color="white" if strong else "black")
    ax.set_xticks(range(len(ranks)), [str(r) for r in ranks])
    ax.set_yticks(range(len(sizes)), ["no size" if s is None else str(s) for s in sizes])
    if any(s is not None for s in sizes):
        ax.set_ylabel("problem size")
    ax.set_xlabel(f"ranks per {word}")
    fig.colorbar(image, ax=ax, label=f"gain ({mode} / timeslice)", shrink=1.0)
    set_title(fig, f"{subject_name(kernel, precision, params)}: MPS gain, {mode} / timeslice aggregate throughput over "
           f"{devices}",
           f"above 1: {mode} faster; n/a: not measured in both modes")
    return fig


def _configs(at) -> list[tuple[int, str]]:
    pairs = sort_rows(at[["ranks_per_gpu", "mode_label"]].drop_duplicates(), ["ranks_per_gpu", "mode_label"],
                      "mode_label")
    return [(int(p.ranks_per_gpu), p.mode_label) for p in pairs.itertuples(index=False)]


def rank_time_figure(rs: ResultSet, kernel: str, precision: str, params: str | None = None) -> Figure:
    """Per-rank iteration times per configuration: a box over all ranks' repetitions,
    a dot per rank (its median), a facet per size; a spread-out box means unfair sharing.

    Ranks per GPU are groups along x, modes boxes within a group in their own
    colour, hatch and (for the dots) marker, named in the legend."""
    r = with_params(rs.results, params)
    results = r[(r["kernel"] == kernel) & (r["precision"] == precision) & (r["status"] == "ok")]
    name = subject_name(kernel, precision, params)
    ranks = rs.ranks
    # a failed result's times measured nothing the reader should compare
    data = ranks[ranks["result_id"].isin(set(results["result_id"]))] if len(ranks) else ranks
    what = "run" if _is_app(results) else "iteration"
    if data.empty:
        fig, axes = new_figure(1, 6.0, 3.0)
        set_title(fig, f"{name}: time per {what} of each rank")
        return nothing_to_plot(fig, axes[0], "no rank measured")
    results = results[results["result_id"].isin(set(data["result_id"]))]
    word = device_word(results)
    devices, suffix = devices_phrase(results)
    sizes = sizes_of(data)
    modes = sorted(set(data["mode_label"]), key=mode_sort_key)
    # a box per mode measured at that count, side by side and centred on the count's tick
    per_group = data[["size", "ranks_per_gpu", "mode_label"]].drop_duplicates() \
        .groupby(["size", "ranks_per_gpu"], dropna=False).size()
    boxes = int(per_group.max())
    slot = min(0.8 / boxes, 0.45)
    jitter = random.Random(0)
    most = max(len(set(at_size(data, s)["ranks_per_gpu"])) for s in sizes)
    fig, axes = new_figure(len(sizes), max(4.8, 0.32 * most * boxes + 1.6), 3.6,
                        extra_height=1.4 + 0.25 * math.ceil(len(modes) / 3))
    for ax, size in zip(axes, sizes):
        at = at_size(data, size)
        groups = sorted(set(at["ranks_per_gpu"]))
        configs = _configs(at)
        factor, unit = time_scale(float(np.median([s for t in at["iteration_time_samples_s"] for s in t])))
        for rpg, mode in configs:
            sel = at[(at["ranks_per_gpu"] == rpg) & (at["mode_label"] == mode)]
            here = [m for g, m in configs if g == rpg]
            x = groups.index(rpg) + (here.index(mode) - (len(here) - 1) / 2) * slot
            pooled = [s / factor for t in sel["iteration_time_samples_s"] for s in t]
            style = mode_style(mode)
            ax.boxplot([pooled], positions=[x], widths=0.8 * slot, showfliers=False, patch_artist=True,
                       boxprops={"facecolor": to_rgba(style.color, BOX_ALPHA), "edgecolor": style.color,
                                 "hatch": style.hatch},
                       medianprops={"color": style.color, "linewidth": 1.6}, whiskerprops={"color": style.color},
                       capprops={"color": style.color})
            xs = [x + jitter.uniform(-0.3, 0.3) * slot for _ in range(len(sel))]
            ax.scatter(xs, sel["iteration_time_s"] / factor, s=16, color=style.color, marker=style.marker,
                       zorder=3, edgecolors="black", linewidths=0.4)
        ax.set_xticks(range(len(groups)), [str(g) for g in groups])
        ax.set_xlim(-0.5, len(groups) - 0.5)
        ax.set_xlabel(f"ranks per {word}")
        ax.set_ylabel(f"time per {what} [{unit}]")
        ax.set_ylim(bottom=0)
        ax.set_title(size_title(size))
        ax.grid(True, axis="y", alpha=0.3)
    handles = []
    for mode in modes:
        style = mode_style(mode)
        handles.append((Patch(facecolor=to_rgba(style.color, BOX_ALPHA), edgecolor=style.color, hatch=style.hatch),
                        Line2D([], [], color=style.color, marker=style.marker, linestyle="none",
                               markeredgecolor="black", markeredgewidth=0.4)))
    set_legend(fig, handles, [m + suffix.get(m, "") for m in modes], handler_map={tuple: HandlerTuple(ndivide=None)})
    set_title(fig, f"{name}: time per {what} of each rank, on {devices}",
           "box: all ranks x repetitions; dot: one rank's median")
    return fig


def _figure_groups(rs: ResultSet) -> list[tuple[str, str, str, str]]:
    """(kind, kernel, precision, params) of the per-kernel and per-application figures, in display order;
    mixes have their own figure."""
    r = rs.results[rs.results["kind"] != "mix"]
    if r.empty:
        return []
    columns = ["kind", "kernel", "precision", "params"]
    return [tuple(c) for c in sort_rows(r[columns].drop_duplicates(), columns).itertuples(index=False)]


Maker = Callable[[], Figure]


def figure_makers(rs: ResultSet) -> list[tuple[str, Maker]]:
    """(file stem, a function making the figure) for every plot of ``rs``, so that a caller can make,
    write and close one figure at a time.

    Per kernel and precision (and params, when a kernel has them) and per application: throughput, MPS
    gain (when mps and timeslice were both measured), per-rank times, energy per unit of work and SM
    activity (where the results have them: energy_plot.py), and for a latency kernel a latency-throughput
    figure per size; then, when the files hold a mix, the slowdown heatmap (stem
    ``slowdown_mix``).  An application's stems name it after ``app`` (``throughput_app_NAME``); a stem's
    parts are escaped so that different names never share one (figure_layout.slug).
    """
    out: list[tuple[str, Maker]] = []
    groups = _figure_groups(rs)
    pairs = [(kind, k, p) for kind, k, p, _ in groups]
    with_params = {pair for pair in pairs if pairs.count(pair) > 1}  # params in the stem only to tell sets apart
    latency = latency_configs(rs)
    for kind, kernel, precision, params in groups:
        name = ("app", kernel) if kind == "app" else (kernel, precision)
        tail = (params,) if (kind, kernel, precision) in with_params else ()
        out.append((slug("throughput", *name, *tail),
                    lambda k=kernel, p=precision, q=params: throughput_figure(rs, k, p, q)))
        if gain_figure_possible(rs, kernel, precision, params=params):
            out.append((slug("mps-gain", *name, *tail),
                        lambda k=kernel, p=precision, q=params: gain_figure(rs, k, p, params=q)))
        out.append((slug("rank-times", *name, *tail),
                    lambda k=kernel, p=precision, q=params: rank_time_figure(rs, k, p, q)))
        for stem, possible, figure in (("energy", energy_figure_possible, energy_figure),
                                       ("sm-active", activity_figure_possible, activity_figure)):
            if possible(rs, kernel, precision, params):
                out.append((slug(stem, *name, *tail), lambda k=kernel, p=precision, q=params, f=figure: f(rs, k, p, q)))
        for k, p, q, size in latency:
            if (k, p, q) == (kernel, precision, params):
                out.append((slug("latency", *name, *tail, f"size-{size}"),
                            lambda k=k, p=p, q=q, size=size: latency_figure(rs, k, p, size, q)))
    if slowdown_figure_possible(rs):
        out.append(("slowdown_mix", lambda: slowdown_figure(rs)))
    return out


def all_figures(rs: ResultSet) -> list[tuple[str, Figure]]:
    """(file stem, figure) for every plot of ``rs`` (:func:`figure_makers`), all open at once: the caller
    closes them."""
    return [(stem, make()) for stem, make in figure_makers(rs)]


def write_plots(rs: ResultSet, outdir: str | Path, formats: tuple[str, ...] = ("png", "svg")) -> list[Path]:
    """Saves every figure as each of ``formats`` into ``outdir``; returns the paths.

    ``outdir`` is created when missing; figures are rendered in memory and
    written through safe_write, which replaces regular files only.
    """
    written = []
    with OutputDirectory(outdir) as out:
        for stem, make in figure_makers(rs):
            fig = make()
            try:
                for fmt in formats:
                    image = io.BytesIO()
                    fig.savefig(image, format=fmt, dpi=120 if fmt == "png" else None)
                    written.append(out.write(f"{stem}.{fmt}", image.getvalue()))
            finally:
                plt.close(fig)
    return written
