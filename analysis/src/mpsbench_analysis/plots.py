"""Figures: throughput vs ranks per GPU, MPS-gain heatmaps, per-rank times,
latency vs throughput of latency kernels, and the slowdown of mixed tenants.

One figure per kernel and precision (and params, where a kernel has them),
faceted by size, so a sweep gives a handful of files rather than hundreds;
a latency kernel adds one latency-throughput figure per size, and files
with a mix (kernel ``mix``, which has no figure of its own kind) one
slowdown heatmap with a panel per mode.  Each facet picks its own SI prefix
because sizes differ by orders of magnitude.  The Agg backend is forced so
this runs on headless machines and in CI.

The figures go on slides and into the HTML report, so they are laid out
for a reader: matplotlib's constrained layout keeps titles, labels and the
legend apart, titles are wrapped to the figure's width, the legend sits
below the panels with as many columns as fit, every title says how many
GPUs the numbers come from (results' ``devices``), every axis its unit, and
each mode has one colour, marker and line style everywhere (styles.py).
tests/test_figure_layout.py checks all of it from matplotlib's own extents.
"""

from __future__ import annotations

import io
import math
import random
import re
import textwrap
from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
from matplotlib.colors import LogNorm, TwoSlopeNorm, to_rgba  # noqa: E402
from matplotlib.figure import Figure  # noqa: E402
from matplotlib.legend_handler import HandlerTuple  # noqa: E402
from matplotlib.lines import Line2D  # noqa: E402
from matplotlib.patches import Patch  # noqa: E402

from .loader import MIX_KERNEL, ResultSet, mode_sort_key  # noqa: E402
from .safe_write import OutputDirectory  # noqa: E402
from .slowdown import slowdown_matrices, slowdown_table  # noqa: E402
from .styles import mode_style  # noqa: E402
from .summary import gain_table, sort_rows  # noqa: E402
from mpsbench_core.units import prefix_for, prefixed_unit, time_scale  # noqa: E402

#: Figure-relative x of left-aligned titles.
_TITLE_X = 0.01
_TITLE_SIZE = 12
_BOX_ALPHA = 0.25


def mode_color(label: str, labels: list[str] | None = None) -> str:
    """The colour of a mode label (styles.py); ``labels`` is accepted for old callers and ignored."""
    return mode_style(label).color


def _slug(*parts: str) -> str:
    return "_".join(re.sub(r"[^A-Za-z0-9.+-]+", "-", str(p)) for p in parts)


def _sizes(df) -> list:
    """The measured sizes, ascending; None (kernel app, which has no problem size) last."""
    return sorted(set(df["size"]), key=lambda size: (size is None, size or 0))


def _at_size(df, size):
    return df[df["size"].isna()] if size is None else df[df["size"] == size]


def _size_title(size) -> str:
    return "no problem size" if size is None else f"size {size}"


def _plural(n: int, word: str) -> str:
    """'2 GPUs', with a no-break space: a wrapped title keeps the count with its word."""
    return f"{n}\u00a0{word}" + ("" if n == 1 else "s")


def _device_word(df) -> str:
    """'GPU', or 'host' for results of --device cpu (ranks_per_gpu then counts ranks per host)."""
    return "GPU" if (df["device"] != "cpu").any() else "host"


def _devices(df) -> tuple[str, dict[str, str]]:
    """How many GPUs the numbers of ``df`` come from: (phrase for a title, suffix per mode for the legend).

    Each result says how many devices its aggregate spans (``devices``).  One
    count for the whole figure goes into the title ("2 GPUs"); when
    files with different counts were merged, each mode's count goes into its
    legend entry instead, so no line is read as measured on GPUs it was not.
    """
    word = _device_word(df)
    counts = sorted(set(int(n) for n in df["devices"]))
    if len(counts) == 1:
        return _plural(counts[0], word), {}
    per_mode = {m: sorted(set(int(n) for n in g["devices"])) for m, g in df.groupby("mode_label")}
    span = f"{counts[0]} to {_plural(counts[-1], word)}"
    if all(len(c) == 1 for c in per_mode.values()):
        return f"{span} (per mode in the legend)", {m: f" ({_plural(c[0], word)})" for m, c in per_mode.items()}
    return f"{span} (differs between results)", {}


def _figure(n: int, width: float, height: float, min_width: float = 6.0,
            extra_height: float = 1.3) -> tuple[Figure, list]:
    """A grid of n axes, at most 3 across and about 15 inches wide, under constrained layout.

    ``extra_height`` is room for the title above and the legend below the panels.
    """
    ncols = max(1, min(3, n, int(15 // width)))
    nrows = math.ceil(n / ncols)
    fig = plt.figure(figsize=(max(width * ncols, min_width), height * nrows + extra_height), layout="constrained")
    fig.get_layout_engine().set(w_pad=0.06, h_pad=0.06)
    axes = fig.subplots(nrows, ncols, squeeze=False)
    flat = list(axes.flat)
    for ax in flat[n:]:
        ax.set_visible(False)
    return fig, flat[:n]


def _wrap(fig: Figure, text: str, fontsize: float) -> str:
    """``text`` with each line broken at spaces so that it fits the figure's width."""
    renderer = fig.canvas.get_renderer()
    avail = fig.bbox.width * (1 - 2 * _TITLE_X)
    probe = fig.text(0, 0, "", fontsize=fontsize)
    out = []
    try:
        for line in text.split("\n"):
            chars = len(line)
            while True:
                wrapped = textwrap.fill(line, max(chars, 8), break_on_hyphens=False)
                probe.set_text(wrapped)
                if probe.get_window_extent(renderer).width <= avail or chars <= 8:
                    break
                chars -= max(1, chars // 20)
            out.append(wrapped)
    finally:
        probe.remove()
    return "\n".join(out)


def _title(fig: Figure, title: str, note: str = "") -> None:
    """A left-aligned figure title, wrapped to the width; ``note`` (how to read it) on the line below."""
    text = title + (f"\n{note}" if note else "")
    fig.suptitle(_wrap(fig, text, _TITLE_SIZE), x=_TITLE_X, ha="left", fontsize=_TITLE_SIZE)


def _legend(fig: Figure, handles: list, labels: list[str], **kwargs) -> None:
    """The modes' legend below the panels, in as many columns as fit the figure's width."""
    if not labels:
        return
    renderer = fig.canvas.get_renderer()
    for ncols in range(min(len(labels), 8), 0, -1):
        legend = fig.legend(handles, labels, title="mode", loc="outside lower center", ncols=ncols,
                            frameon=False, columnspacing=1.4, **kwargs)
        if ncols == 1 or legend.get_window_extent(renderer).width <= 0.98 * fig.bbox.width:
            return
        legend.remove()


def _rank_axis(ax, ranks: list[int], word: str = "GPU") -> None:
    """Ranks per GPU on a log2 axis with a tick at each measured count."""
    if len(ranks) > 1 and min(ranks) > 0:
        ax.set_xscale("log", base=2)
    ax.set_xticks(ranks)
    ax.set_xticklabels([str(r) for r in ranks])
    ax.minorticks_off()
    ax.set_xlabel(f"ranks per {word}")


def _nothing(fig: Figure, ax, what: str) -> Figure:
    ax.text(0.5, 0.5, f"no successful result to plot ({what})", ha="center", va="center", transform=ax.transAxes)
    ax.set_axis_off()
    return fig


def _name(kernel: str, precision: str, params: str | None) -> str:
    """'matmul fp32', or 'inference fp16 (hidden=2048,layers=4)' for a kernel with params."""
    return f"{kernel} {precision}" + (f" ({params})" if params else "")


def _with_params(df, params: str | None):
    """Rows of ``df`` with these params (all rows for None)."""
    return df if params is None or "params" not in df else df[df["params"] == params]


def throughput_figure(rs: ResultSet, kernel: str, precision: str, params: str | None = None) -> Figure:
    """Aggregate throughput (median, min-max bars) vs ranks per GPU, a line per mode, a facet per size."""
    r = _with_params(rs.results, params)
    data = r[(r["kernel"] == kernel) & (r["precision"] == precision) & r["throughput"].notna()]
    name = _name(kernel, precision, params)
    if data.empty:
        fig, axes = _figure(1, 6.0, 3.0)
        _title(fig, f"{name}: aggregate throughput")
        return _nothing(fig, axes[0], "every result failed")
    sizes = _sizes(data)
    modes = sorted(set(data["mode_label"]), key=mode_sort_key)
    word = _device_word(data)
    devices, suffix = _devices(data)
    fig, axes = _figure(len(sizes), 4.8, 3.4, extra_height=1.4 + 0.25 * math.ceil(len(modes) / 3))
    handles: dict[str, object] = {}
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
            style = mode_style(mode)
            handles[mode] = ax.errorbar(m["ranks_per_gpu"], y, yerr=err, label=mode, capsize=3, linewidth=1.6,
                                        markersize=6, **style.line_kwargs)
        _rank_axis(ax, sorted(set(at["ranks_per_gpu"])), word)
        ax.set_ylim(0, 1.1 * at["throughput_max"].max() / factor)
        ax.set_ylabel(f"aggregate throughput [{prefixed_unit(prefix, unit)}]")
        ax.set_title(_size_title(size))
        ax.grid(True, alpha=0.3)
    labels = [m for m in modes if m in handles]
    _legend(fig, [handles[m] for m in labels], [m + suffix.get(m, "") for m in labels])
    what = "completed runs per second" if kernel == "app" else "throughput"
    _title(fig, f"{name}: {what} vs ranks per {word}, aggregate over {devices}",
           "median of the repetitions; bars: min to max")
    return fig


def gain_figure(rs: ResultSet, kernel: str, precision: str, mode: str = "mps",
                params: str | None = None) -> Figure | None:
    """Heatmap of mode/timeslice throughput over size x ranks per GPU; None without data."""
    g = _with_params(gain_table(rs, mode), params)
    g = g[(g["kernel"] == kernel) & (g["precision"] == precision)]
    if g.empty:
        return None
    r = _with_params(rs.results, params)
    measured = r[(r["kernel"] == kernel) & (r["precision"] == precision) & r["mode_label"].isin([mode, "timeslice"])]
    devices, suffix = _devices(measured)
    if suffix:  # e.g. timeslice on 1 GPU, mps on 2: say so in the title, there is no legend
        devices = ", ".join(f"{m}{s}" for m, s in suffix.items())
    word = _device_word(measured)
    # every size and count either mode ran (a failed or missing configuration is a grey cell, not a gap)
    sizes = _sizes(measured)
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
    _title(fig, f"{_name(kernel, precision, params)}: MPS gain, {mode} / timeslice aggregate throughput over "
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
    r = _with_params(rs.results, params)
    results = r[(r["kernel"] == kernel) & (r["precision"] == precision) & (r["status"] == "ok")]
    name = _name(kernel, precision, params)
    ranks = rs.ranks
    # a failed result's times measured nothing the reader should compare
    data = ranks[ranks["result_id"].isin(set(results["result_id"]))] if len(ranks) else ranks
    what = "run" if kernel == "app" else "iteration"
    if data.empty:
        fig, axes = _figure(1, 6.0, 3.0)
        _title(fig, f"{name}: time per {what} of each rank")
        return _nothing(fig, axes[0], "no rank measured")
    results = results[results["result_id"].isin(set(data["result_id"]))]
    word = _device_word(results)
    devices, suffix = _devices(results)
    sizes = _sizes(data)
    modes = sorted(set(data["mode_label"]), key=mode_sort_key)
    # a box per mode measured at that count, side by side and centred on the count's tick
    per_group = data[["size", "ranks_per_gpu", "mode_label"]].drop_duplicates() \
        .groupby(["size", "ranks_per_gpu"], dropna=False).size()
    boxes = int(per_group.max())
    slot = min(0.8 / boxes, 0.45)
    jitter = random.Random(0)
    most = max(len(set(_at_size(data, s)["ranks_per_gpu"])) for s in sizes)
    fig, axes = _figure(len(sizes), max(4.8, 0.32 * most * boxes + 1.6), 3.6,
                        extra_height=1.4 + 0.25 * math.ceil(len(modes) / 3))
    for ax, size in zip(axes, sizes):
        at = _at_size(data, size)
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
                       boxprops={"facecolor": to_rgba(style.color, _BOX_ALPHA), "edgecolor": style.color,
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
        ax.set_title(_size_title(size))
        ax.grid(True, axis="y", alpha=0.3)
    handles = []
    for mode in modes:
        style = mode_style(mode)
        handles.append((Patch(facecolor=to_rgba(style.color, _BOX_ALPHA), edgecolor=style.color, hatch=style.hatch),
                        Line2D([], [], color=style.color, marker=style.marker, linestyle="none",
                               markeredgecolor="black", markeredgewidth=0.4)))
    _legend(fig, handles, [m + suffix.get(m, "") for m in modes], handler_map={tuple: HandlerTuple(ndivide=None)})
    _title(fig, f"{name}: time per {what} of each rank, on {devices}",
           "box: all ranks x repetitions; dot: one rank's median")
    return fig


# ---- latency kernels: latency vs throughput ------------------------------------------------------

#: Where a point's label may go, in points from the point (tried in order), with its alignment.
_LABEL_OFFSETS = [((5, 5), "left", "bottom"), ((5, -5), "left", "top"), ((-5, 5), "right", "bottom"),
                  ((-5, -5), "right", "top"), ((0, 9), "center", "bottom"), ((0, -9), "center", "top"),
                  ((10, 0), "left", "center"), ((-10, 0), "right", "center")]


def _freeze_layout(fig: Figure) -> None:
    """Lays the figure out once (constrained layout) and keeps it there, so that texts placed next
    from pixel positions stay where they were checked."""
    fig.canvas.draw()
    fig.set_layout_engine("none")


def _label_points(fig: Figure, ax, points: list[tuple[float, float, str, str]], fontsize: float = 8) -> None:
    """Labels each (x, y, text, colour) point next to it, at the first offset where the label stays inside
    the axes and clear of the labels placed before; a label with no such place is left out (another mode's
    point at the same ranks per GPU carries the same text).  Call after :func:`_freeze_layout`."""
    renderer = fig.canvas.get_renderer()
    area = ax.get_window_extent(renderer)
    placed: list = []
    for x, y, text, color in points:
        for offset, ha, va in _LABEL_OFFSETS:
            label = ax.annotate(text, (x, y), xytext=offset, textcoords="offset points", ha=ha, va=va,
                                fontsize=fontsize, color=color, fontweight="bold")
            box = label.get_window_extent(renderer)
            inside = (box.x0 >= area.x0 + 2 and box.x1 <= area.x1 - 2 and box.y0 >= area.y0 + 2
                      and box.y1 <= area.y1 - 2)
            clear = all(min(box.x1, b.x1) - max(box.x0, b.x0) <= 0 or min(box.y1, b.y1) - max(box.y0, b.y0) <= 0
                        for b in placed)
            if inside and clear:
                placed.append(box.expanded(1.0, 1.0))
                break
            label.remove()


def latency_configs(rs: ResultSet) -> list[tuple[str, str, str, object]]:
    """(kernel, precision, params, size) of every configuration with request latency, in display order."""
    r = rs.results
    data = r[(r["kernel"] != MIX_KERNEL) & r["latency_p99_s"].notna() & (r["status"] == "ok")]
    if data.empty:
        return []
    combos = sort_rows(data[["kernel", "precision", "params", "size"]].drop_duplicates(),
                       ["kernel", "precision", "params", "size"])
    return [tuple(c) for c in combos.itertuples(index=False)]


def latency_figure(rs: ResultSet, kernel: str, precision: str, size, params: str = "") -> Figure:
    """The latency-throughput trade-off of a latency kernel: per mode, as ranks per GPU grow, the aggregate
    requests per second (x) against the p99 request latency (filled markers) and the p50 (hollow markers on
    a thin dashed line), each point labelled with its ranks per GPU."""
    r = rs.results
    data = r[(r["kernel"] == kernel) & (r["precision"] == precision) & (r["params"] == params)
             & r["latency_p99_s"].notna() & r["throughput"].notna() & (r["status"] == "ok")]
    data = _at_size(data, size)
    name = f"{_name(kernel, precision, params or None)}, {_size_title(size)}"
    if data.empty:
        fig, axes = _figure(1, 6.0, 3.0)
        _title(fig, f"{name}: request latency vs throughput")
        return _nothing(fig, axes[0], "no request latency")
    modes = sorted(set(data["mode_label"]), key=mode_sort_key)
    word = _device_word(data)
    devices, suffix = _devices(data)
    fig, axes = _figure(1, 7.0, 4.4, extra_height=1.6 + 0.25 * math.ceil(len(modes) / 3))
    ax = axes[0]
    factor, prefix = prefix_for(float(data["throughput"].max()))
    unit = data["primary_unit"].iloc[0]
    slowest = float(data["latency_p99_s"].max())
    tfactor, tunit = time_scale(slowest)
    handles, labels, points = [], [], []
    for mode in modes:
        m = data[data["mode_label"] == mode].sort_values("ranks_per_gpu")
        style = mode_style(mode)
        x = m["throughput"] / factor
        (line,) = ax.plot(x, m["latency_p99_s"] / tfactor, color=style.color, marker=style.marker,
                          linestyle=style.linestyle, linewidth=1.8, markersize=6.5, zorder=3)
        if m["latency_p50_s"].notna().any():
            ax.plot(x, m["latency_p50_s"] / tfactor, color=style.color, marker=style.marker, linestyle=(0, (3, 2)),
                    linewidth=0.9, markersize=5, markerfacecolor="white", markeredgewidth=1.1, zorder=2)
        handles.append(line)
        labels.append(mode + suffix.get(mode, ""))
        points += [(xi, yi / tfactor, str(int(k)), style.color)
                   for xi, yi, k in zip(x, m["latency_p99_s"], m["ranks_per_gpu"])]
    lowest = float(data[["latency_p50_s", "latency_p99_s"]].min().min())
    if lowest > 0 and slowest / lowest > 30:
        ax.set_yscale("log")
        ax.set_ylim(lowest / tfactor / 1.6, slowest / tfactor * 1.8)
    else:
        ax.set_ylim(0, slowest / tfactor * 1.18)
    ax.set_xlim(0, float(data["throughput"].max()) / factor * 1.12)
    ax.set_xlabel(f"aggregate throughput [{prefixed_unit(prefix, unit)}]")
    ax.set_ylabel(f"request latency [{tunit}]")
    ax.grid(True, alpha=0.3)
    _legend(fig, handles, labels)
    _title(fig, f"{name}: request latency vs throughput as ranks per {word} grow, over {devices}",
           f"filled markers: p99, hollow on a thin dashed line: p50; labels: ranks per {word}")
    _freeze_layout(fig)
    _label_points(fig, ax, points)
    return fig


# ---- mixed tenants: the slowdown matrix ---------------------------------------------------------

def _short_labels(labels: list[str]) -> list[str]:
    """The tenant labels without their [params] where the labels stay distinct that way (ticks are narrow)."""
    short = [re.sub(r"\[[^\]]*\]", "", label) for label in labels]
    return short if len(set(short)) == len(short) else labels


def slowdown_figure(rs: ResultSet) -> Figure | None:
    """Heatmaps of the slowdown of each tenant (row) next to each co-runner (column), a panel per mode,
    centred at 1 (slowdown.py); None when the files hold no successful mix."""
    table = slowdown_table(rs)
    matrices = slowdown_matrices(table) if not table.empty else {}
    if not matrices:
        return None
    modes = list(matrices)
    labels = matrices[modes[0]][0]
    ticks = _short_labels(labels)
    r = rs.results
    mixes = r[(r["kernel"] == MIX_KERNEL) & (r["status"] == "ok") & r["mode_label"].isin(modes)]
    devices, suffix = _devices(mixes)
    if suffix:
        devices = ", ".join(f"{m}{s}" for m, s in suffix.items())
    word = _device_word(mixes)
    values = np.concatenate([grid[np.isfinite(grid)] for _, grid in matrices.values()])
    lo = float(values.min()) if values.size else 1.0
    hi = float(values.max()) if values.size else 1.0
    # Slowdowns span orders of magnitude (a starved latency tenant next to a few percent): a log scale
    # symmetric about 1 keeps a 5x as visible next to a 90x as 1/5x would be.
    span = max(hi, 1.0 / lo if lo > 0 else 2.0, 1.05)
    norm = LogNorm(vmin=1.0 / span, vmax=span)
    n = len(labels)
    longest = max(len(t) for t in ticks)
    side = max(2.6, 0.7 * n + 0.9)
    fig, axes = _figure(len(modes), side + 0.07 * longest + 0.6, side + 0.05 * longest, min_width=7.0,
                        extra_height=1.5)
    cmap = matplotlib.colormaps["RdBu_r"].with_extremes(bad="#c8c8c8")  # red: slower when sharing
    image = None
    for index, (ax, mode) in enumerate(zip(axes, modes)):
        grid = matrices[mode][1]
        image = ax.imshow(np.ma.masked_invalid(grid), cmap=cmap, norm=norm, aspect="auto")
        for i in range(n):
            for j in range(n):
                if np.isnan(grid[i, j]):
                    ax.text(j, i, "n/a", ha="center", va="center", fontsize=9, color="#444444")
                else:
                    strong = abs(norm(grid[i, j]) - 0.5) > 0.3
                    ax.text(j, i, f"{grid[i, j]:.2f}", ha="center", va="center", fontsize=9,
                            color="white" if strong else "black", fontweight="bold" if i == j else "normal")
        ax.set_xticks(range(n), ticks, rotation=30, ha="right", rotation_mode="anchor", fontsize=8)
        ax.set_yticks(range(n), ticks if index % 3 == 0 else [""] * n, fontsize=8)
        ax.set_xlabel("sharing with")
        if index % 3 == 0:
            ax.set_ylabel("tenant (row) slowed down")
        ax.set_title(mode + suffix.get(mode, ""))
    fig.colorbar(image, ax=axes, label="slowdown (alone / sharing), log scale", shrink=1.0)
    _title(fig, f"Mixed tenants: slowdown of each tenant when sharing a {word} with another kernel, over {devices}",
           "alone / sharing throughput, above 1: slower when sharing; diagonal: next to ranks of its own kind; "
           "n/a: not measured")
    return fig


def _figure_groups(rs: ResultSet) -> list[tuple[str, str, str]]:
    """(kernel, precision, params) of the per-kernel figures, in display order; mixes have their own figure."""
    r = rs.results[rs.results["kernel"] != MIX_KERNEL]
    if r.empty:
        return []
    combos = sort_rows(r[["kernel", "precision", "params"]].drop_duplicates(), ["kernel", "precision", "params"])
    return [tuple(c) for c in combos.itertuples(index=False)]


def all_figures(rs: ResultSet) -> list[tuple[str, Figure]]:
    """(file stem, figure) for every plot of ``rs``; the caller closes them.

    Per kernel and precision (and params, when a kernel has them): throughput, MPS gain (when mps and
    timeslice were both measured), per-rank times, and for a latency kernel a latency-throughput figure
    per size; then, when the files hold a mix, the slowdown heatmap (stem ``slowdown_mix``).
    """
    out = []
    groups = _figure_groups(rs)
    pairs = [(k, p) for k, p, _ in groups]
    with_params = {pair for pair in pairs if pairs.count(pair) > 1}  # params in the stem only to tell sets apart
    latency = latency_configs(rs)
    for kernel, precision, params in groups:
        tail = (params,) if (kernel, precision) in with_params else ()
        out.append((_slug("throughput", kernel, precision, *tail), throughput_figure(rs, kernel, precision, params)))
        gain = gain_figure(rs, kernel, precision, params=params)
        if gain is not None:
            out.append((_slug("mps-gain", kernel, precision, *tail), gain))
        out.append((_slug("rank-times", kernel, precision, *tail), rank_time_figure(rs, kernel, precision, params)))
        for k, p, q, size in latency:
            if (k, p, q) == (kernel, precision, params):
                out.append((_slug("latency", kernel, precision, *tail, f"size-{size}"),
                            latency_figure(rs, kernel, precision, size, params)))
    slowdown = slowdown_figure(rs)
    if slowdown is not None:
        out.append(("slowdown_mix", slowdown))
    return out


def figure_title(fig: Figure) -> str:
    """The figure's title on one line (for alt texts)."""
    title = fig._suptitle.get_text() if fig._suptitle is not None else ""
    return " ".join(title.replace("\u00a0", " ").split())


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
