"""The latency-throughput figure of a latency kernel (inference): per mode, as ranks per GPU grow, the
aggregate requests per second against the p99 and p50 request latency, each point labelled with its ranks
per GPU where its label fits."""

from __future__ import annotations

import math

from matplotlib.figure import Figure

from mpsbench_core.modes import sort_key as mode_sort_key, style as mode_style
from mpsbench_core.units import prefix_for, prefixed_unit, time_scale

from .figure_layout import (at_size, device_word, devices_phrase, freeze_layout, new_figure, nothing_to_plot,
                            set_legend, set_title, size_title, subject_name)
from .loader import ResultSet
from .summary import sort_rows

#: Where a point's label may go, in points from the point (tried in order), with its alignment.
_LABEL_OFFSETS = [((5, 5), "left", "bottom"), ((5, -5), "left", "top"), ((-5, 5), "right", "bottom"),
                  ((-5, -5), "right", "top"), ((0, 9), "center", "bottom"), ((0, -9), "center", "top"),
                  ((10, 0), "left", "center"), ((-10, 0), "right", "center")]


def _label_points(fig: Figure, ax, points: list[tuple[float, float, str, str]], fontsize: float = 8) -> None:
    """Labels each (x, y, text, colour) point next to it, at the first offset where the label stays inside
    the axes and clear of the labels placed before; a label with no such place is left out (another mode's
    point at the same ranks per GPU carries the same text).  Call after :func:`freeze_layout`."""
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
    data = r[(r["kind"] == "kernel") & r["latency_p99_s"].notna() & (r["status"] == "ok")]
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
    data = at_size(data, size)
    name = f"{subject_name(kernel, precision, params or None)}, {size_title(size)}"
    if data.empty:
        fig, axes = new_figure(1, 6.0, 3.0)
        set_title(fig, f"{name}: request latency vs throughput")
        return nothing_to_plot(fig, axes[0], "no request latency")
    modes = sorted(set(data["mode_label"]), key=mode_sort_key)
    word = device_word(data)
    devices, suffix = devices_phrase(data)
    fig, axes = new_figure(1, 7.0, 4.4, extra_height=1.6 + 0.25 * math.ceil(len(modes) / 3))
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
    set_legend(fig, handles, labels)
    set_title(fig, f"{name}: request latency vs throughput as ranks per {word} grow, over {devices}",
           f"filled markers: p99, hollow on a thin dashed line: p50; labels: ranks per {word}")
    freeze_layout(fig)
    _label_points(fig, ax, points)
    return fig
