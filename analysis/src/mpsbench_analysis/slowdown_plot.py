"""The slowdown heatmap of mixed tenants: each tenant (row) next to each co-runner (column), a panel per
mode, on a log scale centred at 1 (slowdown.py computes the numbers)."""

from __future__ import annotations

import re

import numpy as np
from matplotlib.colors import LogNorm
from matplotlib.figure import Figure

from .figure_layout import devices_phrase, device_word, matplotlib, new_figure, set_title
from .loader import ResultSet
from .slowdown import slowdown_matrices, slowdown_table

def _short_labels(labels: list[str]) -> list[str]:
    """The tenant labels without their [params] where the labels stay distinct that way (ticks are narrow)."""
    short = [re.sub(r"\[[^\]]*\]", "", label) for label in labels]
    return short if len(set(short)) == len(short) else labels


def slowdown_figure_possible(rs: ResultSet) -> bool:
    """Whether the files hold a successful mix, with a slowdown to draw."""
    table = slowdown_table(rs)
    return not table.empty and bool(slowdown_matrices(table))


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
    mixes = r[(r["kind"] == "mix") & (r["status"] == "ok") & r["mode_label"].isin(modes)]
    devices, suffix = devices_phrase(mixes)
    if suffix:
        devices = ", ".join(f"{m}{s}" for m, s in suffix.items())
    word = device_word(mixes)
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
    fig, axes = new_figure(len(modes), side + 0.07 * longest + 0.6, side + 0.05 * longest, min_width=7.0,
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
    set_title(fig, f"Mixed tenants: slowdown of each tenant when sharing a {word} with another kernel, over {devices}",
           "alone / sharing throughput, above 1: slower when sharing; diagonal: next to ranks of its own kind; "
           "n/a: not measured")
    return fig
