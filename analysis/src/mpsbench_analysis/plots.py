"""Figures: throughput vs ranks per GPU, MPS-gain heatmaps, per-rank times.

One figure per kernel and precision, faceted by size, so a sweep gives a
handful of files rather than hundreds.  Each facet picks its own SI prefix
because sizes differ by orders of magnitude.  The Agg backend is forced so
this runs on headless machines and in CI.
"""

from __future__ import annotations

import io
import math
import random
import re
from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
from matplotlib.colors import TwoSlopeNorm  # noqa: E402
from matplotlib.figure import Figure  # noqa: E402

from .loader import ResultSet, mode_sort_key  # noqa: E402
from .safe_write import OutputDirectory  # noqa: E402
from .summary import gain_table, sort_rows  # noqa: E402
from .units import prefix_for, prefixed_unit, time_scale  # noqa: E402

_MODE_COLORS = {"timeslice": "#1f77b4", "mps": "#ff7f0e", "mps-qos": "#2ca02c", "streams": "#9467bd",
                "mixed": "#d62728", "cpu": "#7f7f7f"}
_OTHER_COLORS = ["#8c564b", "#e377c2", "#17becf", "#bcbd22"]
_MARKERS = {"timeslice": "o", "mps": "s", "mps-qos": "^", "streams": "D", "mixed": "x", "cpu": "o"}


def mode_color(label: str, labels: list[str]) -> str:
    """Fixed colours for the known modes; labels such as ``mps-qos:50%`` take the next free one."""
    if label in _MODE_COLORS:
        return _MODE_COLORS[label]
    extras = [m for m in sorted(set(labels), key=mode_sort_key) if m not in _MODE_COLORS]
    return _OTHER_COLORS[extras.index(label) % len(_OTHER_COLORS)] if label in extras else "#000000"


def _slug(*parts: str) -> str:
    return "_".join(re.sub(r"[^A-Za-z0-9.+-]+", "-", str(p)) for p in parts)


def _sizes(df) -> list:
    """The measured sizes, ascending; None (kernel app, which has no problem size) last."""
    return sorted(set(df["size"]), key=lambda size: (size is None, size or 0))


def _at_size(df, size):
    return df[df["size"].isna()] if size is None else df[df["size"] == size]


def _size_title(size) -> str:
    return "no problem size" if size is None else f"size {size}"


def _facets(n: int, width: float = 4.4, height: float = 3.4) -> tuple[Figure, list]:
    """A grid of n axes, at most 3 across and about 15 inches wide."""
    ncols = max(1, min(3, n, int(15 // width)))
    nrows = math.ceil(n / ncols)
    fig, axes = plt.subplots(nrows, ncols, figsize=(width * ncols, height * nrows + 0.5), squeeze=False)
    flat = list(axes.flat)
    for ax in flat[n:]:
        ax.set_visible(False)
    return fig, flat[:n]


def _rank_axis(ax, ranks: list[int]) -> None:
    """Ranks per GPU on a log2 axis with a tick at each measured count."""
    if len(ranks) > 1 and min(ranks) > 0:
        ax.set_xscale("log", base=2)
    ax.set_xticks(ranks)
    ax.set_xticklabels([str(r) for r in ranks])
    ax.minorticks_off()
    ax.set_xlabel("ranks per GPU")


def throughput_figure(rs: ResultSet, kernel: str, precision: str) -> Figure:
    """Aggregate throughput (median, min-max bars) vs ranks per GPU, a line per mode, a facet per size."""
    r = rs.results
    data = r[(r["kernel"] == kernel) & (r["precision"] == precision) & r["throughput"].notna()]
    sizes = _sizes(data)
    modes = sorted(set(data["mode_label"]), key=mode_sort_key)
    fig, axes = _facets(len(sizes))
    for ax, size in zip(axes, sizes):
        at = _at_size(data, size)
        factor, prefix = prefix_for(at["throughput_max"].max())
        unit = at["primary_unit"].iloc[0]
        for mode in modes:
            m = at[at["mode_label"] == mode].sort_values("ranks_per_gpu")
            if m.empty:
                continue
            y = m["throughput"] / factor
            err = [y - m["throughput_min"] / factor, m["throughput_max"] / factor - y]
            ax.errorbar(m["ranks_per_gpu"], y, yerr=err, label=mode, color=mode_color(mode, modes),
                        marker=_MARKERS.get(mode.split(":")[0], "o"), capsize=3, linewidth=1.6)
        _rank_axis(ax, sorted(set(at["ranks_per_gpu"])))
        ax.set_ylim(0, 1.1 * at["throughput_max"].max() / factor)
        ax.set_ylabel(f"throughput [{prefixed_unit(prefix, unit)}]")
        ax.set_title(_size_title(size))
        ax.grid(True, alpha=0.3)
    handles, labels = [], []
    for ax in axes:  # a mode may be missing from some sizes
        for h, label in zip(*ax.get_legend_handles_labels()):
            if label not in labels:
                handles.append(h)
                labels.append(label)
    order = sorted(range(len(labels)), key=lambda i: mode_sort_key(labels[i]))
    handles, labels = [handles[i] for i in order], [labels[i] for i in order]
    fig.legend(handles, labels, title="mode", loc="upper right", ncols=min(len(labels), 6), frameon=False)
    fig.suptitle(f"{kernel} {precision}: aggregate throughput vs ranks per GPU (median, bars min-max)",
                 x=0.02, ha="left")
    fig.tight_layout(rect=(0, 0, 1, 1 - 0.5 / fig.get_figheight()))  # room for the suptitle
    return fig


def gain_figure(rs: ResultSet, kernel: str, precision: str, mode: str = "mps") -> Figure | None:
    """Heatmap of mode/timeslice throughput over size x ranks per GPU; None without data."""
    g = gain_table(rs, mode)
    g = g[(g["kernel"] == kernel) & (g["precision"] == precision)]
    if g.empty:
        return None
    sizes = _sizes(g)
    ranks = sorted(set(g["ranks_per_gpu"]))
    grid = np.full((len(sizes), len(ranks)), np.nan)
    for row in g.itertuples(index=False):
        grid[sizes.index(row.size), ranks.index(row.ranks_per_gpu)] = row.gain
    # symmetric in ratio around 1 so that x2 and x0.5 look equally strong
    lo, hi = np.nanmin(grid), np.nanmax(grid)
    span = max(hi, 1.0 / lo if lo > 0 else 2.0, 1.05)
    norm = TwoSlopeNorm(vcenter=1.0, vmin=min(lo, 1.0 / span), vmax=max(hi, span))
    fig, ax = plt.subplots(figsize=(1.3 * len(ranks) + 3.2, 0.55 * len(sizes) + 2.2))
    cmap = matplotlib.colormaps["RdBu"].with_extremes(bad="#dddddd")  # grey: not measured in both modes
    image = ax.imshow(np.ma.masked_invalid(grid), cmap=cmap, norm=norm, aspect="auto", origin="lower")
    for i in range(len(sizes)):
        for j in range(len(ranks)):
            if not np.isnan(grid[i, j]):
                strong = abs(norm(grid[i, j]) - 0.5) > 0.35
                ax.text(j, i, f"{grid[i, j]:.2f}", ha="center", va="center", fontsize=9,
                        color="white" if strong else "black")
    ax.set_xticks(range(len(ranks)), [str(r) for r in ranks])
    ax.set_yticks(range(len(sizes)), ["-" if s is None else str(s) for s in sizes])
    ax.set_xlabel("ranks per GPU")
    ax.set_ylabel("problem size")
    fig.colorbar(image, ax=ax, label=f"gain = {mode} / timeslice throughput")
    ax.set_title(f"{kernel} {precision}: MPS gain (>1: {mode} faster)")
    fig.tight_layout()
    return fig


def rank_time_figure(rs: ResultSet, kernel: str, precision: str) -> Figure:
    """Per-rank iteration times per configuration: a box over all ranks' repetitions,
    a dot per rank (its median), a facet per size; a spread-out box means unfair sharing."""
    ranks = rs.ranks
    data = ranks[(ranks["kernel"] == kernel) & (ranks["precision"] == precision)]
    sizes = _sizes(data)
    modes = sorted(set(data["mode_label"]), key=mode_sort_key)
    jitter = random.Random(0)
    most = max(len(_at_size(data, s)[["ranks_per_gpu", "mode_label"]].drop_duplicates()) for s in sizes)
    fig, axes = _facets(len(sizes), width=max(4.4, 0.6 * most + 1.2), height=3.8)
    for ax, size in zip(axes, sizes):
        at = _at_size(data, size)
        configs = sort_rows(at[["ranks_per_gpu", "mode_label"]].drop_duplicates(), ["ranks_per_gpu", "mode_label"],
                            "mode_label")
        factor, unit = time_scale(float(np.median([s for t in at["iteration_time_samples_s"] for s in t])))
        for x, c in enumerate(configs.itertuples(index=False)):
            sel = at[(at["ranks_per_gpu"] == c.ranks_per_gpu) & (at["mode_label"] == c.mode_label)]
            pooled = [s / factor for t in sel["iteration_time_samples_s"] for s in t]
            color = mode_color(c.mode_label, modes)
            ax.boxplot([pooled], positions=[x], widths=0.6, showfliers=False, patch_artist=True,
                       boxprops={"facecolor": color, "alpha": 0.25, "edgecolor": color},
                       medianprops={"color": color}, whiskerprops={"color": color}, capprops={"color": color})
            xs = [x + jitter.uniform(-0.18, 0.18) for _ in range(len(sel))]
            ax.scatter(xs, sel["iteration_time_s"] / factor, s=14, color=color, zorder=3,
                       edgecolors="black", linewidths=0.4)
        labels = [f"{c.ranks_per_gpu}\n{c.mode_label.replace(':', chr(10))}" if len(modes) > 1
                  else str(c.ranks_per_gpu)
                  for c in configs.itertuples(index=False)]
        ax.set_xticks(range(len(configs)), labels, fontsize=8 if len(modes) > 1 else 10)
        ax.set_xlabel("ranks per GPU" + (" / mode" if len(modes) > 1 else ""))
        ax.set_ylabel(f"time per iteration [{unit}]")
        ax.set_ylim(bottom=0)
        ax.set_title(_size_title(size))
        ax.grid(True, axis="y", alpha=0.3)
    fig.suptitle(f"{kernel} {precision}: per-rank iteration time (box: all ranks x repetitions; dot: a rank's median)",
                 x=0.02, ha="left")
    fig.tight_layout(rect=(0, 0, 1, 1 - 0.5 / fig.get_figheight()))  # room for the suptitle
    return fig


def all_figures(rs: ResultSet) -> list[tuple[str, Figure]]:
    """(file stem, figure) for every plot of ``rs``; the caller closes them."""
    out = []
    pairs = sort_rows(rs.results[["kernel", "precision"]].drop_duplicates(), ["kernel", "precision"])
    for kernel, precision in pairs.itertuples(index=False):
        out.append((_slug("throughput", kernel, precision), throughput_figure(rs, kernel, precision)))
        gain = gain_figure(rs, kernel, precision)
        if gain is not None:
            out.append((_slug("mps-gain", kernel, precision), gain))
        out.append((_slug("rank-times", kernel, precision), rank_time_figure(rs, kernel, precision)))
    return out


def write_plots(rs: ResultSet, outdir: str | Path, formats: tuple[str, ...] = ("png", "svg")) -> list[Path]:
    """Saves every figure as each of ``formats`` into ``outdir``; returns the paths.

    ``outdir`` is created when missing; figures are rendered in memory and
    written through safe_write, which replaces regular files only.
    """
    written = []
    with OutputDirectory(outdir) as out:
        for stem, fig in all_figures(rs):
            try:
                for fmt in formats:
                    image = io.BytesIO()
                    fig.savefig(image, format=fmt, dpi=120 if fmt == "png" else None)
                    written.append(out.write(f"{stem}.{fmt}", image.getvalue()))
            finally:
                plt.close(fig)
    return written
