"""Why sharing helps and what it costs, as figures: energy per unit of work, and SM activity, against ranks per GPU.

One figure of each per kernel and precision (and params; per application), a panel per size, a line per mode
in its style everywhere (core modes.style), drawn only where some result of the figure has the figure
(energy.py's columns: ``joules_per_unit``, ``sm_active``).  Energy per unit is shown as people know the
throughput (J/TFLOP, J/GB, J/request, J/run, J per program unit): lower is better.  SM activity is the percent
of time the SMs had work (NVML GPM) over the kept repetitions, the mean over the run's GPUs: a GPU that was
idle between one process's kernels fills up when several processes share it.
"""

from __future__ import annotations

import math

from matplotlib.figure import Figure

from mpsbench_core.energy import per_unit_label
from mpsbench_core.modes import sort_key as mode_sort_key, style as mode_style

from .figure_layout import (at_size, device_word, devices_phrase, new_figure, rank_axis, set_legend, set_title,
                            size_title, sizes_of, subject_name, with_params)
from .loader import ResultSet


def _data(rs: ResultSet, kernel: str, precision: str, params: str | None, column: str):
    r = with_params(rs.results, params)
    return r[(r["kernel"] == kernel) & (r["precision"] == precision) & r[column].notna()]


def energy_figure_possible(rs: ResultSet, kernel: str, precision: str, params: str | None = None) -> bool:
    return "joules_per_unit" in rs.results and not _data(rs, kernel, precision, params, "joules_per_unit").empty


def activity_figure_possible(rs: ResultSet, kernel: str, precision: str, params: str | None = None) -> bool:
    return "sm_active" in rs.results and not _data(rs, kernel, precision, params, "sm_active").empty


def _lines(data, column: str, scale: float, ylabel: str, top: float | None) -> tuple[Figure, dict, str]:
    sizes = sizes_of(data)
    modes = sorted(set(data["mode_label"]), key=mode_sort_key)
    word = device_word(data)
    fig, axes = new_figure(len(sizes), 4.8, 3.4, extra_height=1.4 + 0.25 * math.ceil(len(modes) / 3))
    handles: dict[str, object] = {}
    for ax, size in zip(axes, sizes):
        at = at_size(data, size)
        for mode in modes:
            m = at[at["mode_label"] == mode].sort_values("ranks_per_gpu")
            if not m.empty:
                handles[mode], = ax.plot(m["ranks_per_gpu"], m[column] * scale, label=mode, linewidth=1.6,
                                         markersize=6, **mode_style(mode).line_kwargs)
        rank_axis(ax, sorted(set(at["ranks_per_gpu"])), word)
        ax.set_ylim(0, top if top is not None else 1.1 * float((at[column] * scale).max()))
        ax.set_ylabel(ylabel)
        ax.set_title(size_title(size))
        ax.grid(True, alpha=0.3)
    return fig, handles, word


def _legend(fig: Figure, handles: dict, data) -> str:
    """One legend entry per mode in the modes' order, each with its devices where they differ; returns the
    devices phrase for the title."""
    devices, suffix = devices_phrase(data)
    labels = sorted(handles, key=mode_sort_key)
    set_legend(fig, [handles[m] for m in labels], [m + suffix.get(m, "") for m in labels])
    return devices


def energy_figure(rs: ResultSet, kernel: str, precision: str, params: str | None = None) -> Figure:
    """Energy per unit of work (median over nothing: one metered figure per configuration) vs ranks per GPU."""
    data = _data(rs, kernel, precision, params, "joules_per_unit")
    units = sorted(set(data["energy_unit"]))
    factor, label = per_unit_label(units[0] if len(units) == 1 else None)
    fig, handles, word = _lines(data, "joules_per_unit", factor, f"energy per unit of work [{label}]", None)
    devices = _legend(fig, handles, data)
    set_title(fig, f"{subject_name(kernel, precision, params)}: energy per unit of work vs ranks per {word}, "
              f"joules of {devices}", "lower is better; joules over the kept repetitions / their work")
    return fig


def activity_figure(rs: ResultSet, kernel: str, precision: str, params: str | None = None) -> Figure:
    """SM activity (percent of time with work on the SMs) vs ranks per GPU."""
    data = _data(rs, kernel, precision, params, "sm_active")
    fig, handles, word = _lines(data, "sm_active", 1.0, "SM active [%]", 100.0)
    devices = _legend(fig, handles, data)
    set_title(fig, f"{subject_name(kernel, precision, params)}: SM activity vs ranks per {word}, mean over "
              f"{devices}", "percent of the time the SMs had work (NVML GPM), over the kept repetitions")
    return fig
