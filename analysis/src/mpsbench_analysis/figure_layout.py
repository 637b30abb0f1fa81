"""How every figure is laid out for a reader: the grid of panels, the title, the legend, the GPU count.

The figures go on slides and into the HTML report, so matplotlib's constrained layout keeps titles,
labels and the legend apart, titles are wrapped to the figure's width, the legend sits below the panels
with as many columns as fit, and every title says how many GPUs the numbers come from (results'
``devices``).  The Agg backend is forced so that figures render on headless machines and in CI.
tests/test_figure_layout.py checks all of it from matplotlib's own extents.
"""

from __future__ import annotations

import hashlib
import math
import string
import textwrap
from urllib.parse import unquote

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
from matplotlib.figure import Figure  # noqa: E402

#: Figure-relative x of left-aligned titles.
TITLE_X = 0.01
TITLE_SIZE = 12
BOX_ALPHA = 0.25


#: Characters a figure's file stem keeps as they are; every other one is percent-encoded (its UTF-8 bytes).
STEM_KEEP = frozenset(string.ascii_letters + string.digits + ".+-,=")
#: The longest encoded part of a stem: file names stay far below the 255 bytes file systems allow.
MAX_STEM_PART = 100


def _stem_part(text: str) -> str:
    encoded = "".join(c if c in STEM_KEEP else "".join(f"%{b:02X}" for b in c.encode()) for c in text)
    if len(encoded) <= MAX_STEM_PART:
        return encoded
    return encoded[:MAX_STEM_PART - 13] + "~" + hashlib.sha256(text.encode()).hexdigest()[:12]


def slug(*parts: str) -> str:
    """A figure's file stem: the parts joined by "_", each percent-encoded outside STEM_KEEP ("_", the
    separator, and "%", the escape, included), so that different names never share a file: two applications
    whose names differ only in "/" and "," overwrote each other's figures when every other character became
    "-". A part longer than MAX_STEM_PART encoded ends in "~" and a hash of its exact text ("~" is encoded
    anywhere else). The stems of kernels, precisions and sizes (``throughput_matmul_fp32``) are unchanged."""
    return "_".join(_stem_part(str(p)) for p in parts)


def stem_part_text(part: str) -> str:
    """The text a stem's part was made from (its start, for a part cut short by a hash)."""
    return unquote(part)


def sizes_of(df) -> list:
    """The measured sizes, ascending; None (an application, which has no problem size) last."""
    return sorted(set(df["size"]), key=lambda size: (size is None, size or 0))


def at_size(df, size):
    return df[df["size"].isna()] if size is None else df[df["size"] == size]


def size_title(size) -> str:
    return "no problem size" if size is None else f"size {size}"


def plural(n: int, word: str) -> str:
    """'2 GPUs', with a no-break space: a wrapped title keeps the count with its word."""
    return f"{n}\u00a0{word}" + ("" if n == 1 else "s")


def device_word(df) -> str:
    """'GPU', or 'host' for results of --device cpu (ranks_per_gpu then counts ranks per host)."""
    return "GPU" if (df["device"] != "cpu").any() else "host"


def devices_phrase(df) -> tuple[str, dict[str, str]]:
    """How many GPUs the numbers of ``df`` come from: (phrase for a title, suffix per mode for the legend).

    Each result says how many devices its aggregate spans (``devices``).  One
    count for the whole figure goes into the title ("2 GPUs"); when
    files with different counts were merged, each mode's count goes into its
    legend entry instead, so no line is read as measured on GPUs it was not.
    """
    word = device_word(df)
    counts = sorted(set(int(n) for n in df["devices"]))
    if len(counts) == 1:
        return plural(counts[0], word), {}
    per_mode = {m: sorted(set(int(n) for n in g["devices"])) for m, g in df.groupby("mode_label")}
    span = f"{counts[0]} to {plural(counts[-1], word)}"
    if all(len(c) == 1 for c in per_mode.values()):
        return f"{span} (per mode in the legend)", {m: f" ({plural(c[0], word)})" for m, c in per_mode.items()}
    return f"{span} (differs between results)", {}


def new_figure(n: int, width: float, height: float, min_width: float = 6.0,
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


def wrap(fig: Figure, text: str, fontsize: float) -> str:
    """``text`` with each line broken at spaces so that it fits the figure's width."""
    renderer = fig.canvas.get_renderer()
    avail = fig.bbox.width * (1 - 2 * TITLE_X)
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


def set_title(fig: Figure, title: str, note: str = "") -> None:
    """A left-aligned figure title, wrapped to the width; ``note`` (how to read it) on the line below."""
    text = title + (f"\n{note}" if note else "")
    fig.suptitle(wrap(fig, text, TITLE_SIZE), x=TITLE_X, ha="left", fontsize=TITLE_SIZE)


def set_legend(fig: Figure, handles: list, labels: list[str], **kwargs) -> None:
    """The modes' legend below the panels, in as many columns as fit the figure's width."""
    if not labels:
        return
    renderer = fig.canvas.get_renderer()
    for ncols in range(min(len(labels), 8), 0, -1):
        legend = _legend_below(fig, renderer, handles, labels, ncols, **kwargs)
        if ncols == 1 or legend.get_window_extent(renderer).width <= 0.98 * fig.bbox.width:
            return
        legend.remove()


def _legend_below(fig: Figure, renderer, handles: list, labels: list[str], ncols: int, **kwargs):
    """A legend below the panels, outside them: constrained layout's "outside" location (matplotlib 3.7 on);
    before it (Debian 12's 3.6), the legend at the bottom and the layout's box above it."""
    style = dict(title="mode", ncols=ncols, frameon=False, columnspacing=1.4, **kwargs)
    try:
        return fig.legend(handles, labels, loc="outside lower center", **style)
    except ValueError:
        legend = fig.legend(handles, labels, loc="lower center", bbox_to_anchor=(0.5, 0.0), **style)
        share = min(0.5, legend.get_window_extent(renderer).height / fig.bbox.height + 0.01)
        fig.get_layout_engine().set(rect=(0, share, 1, 1 - share))
        return legend


def rank_axis(ax, ranks: list[int], word: str = "GPU") -> None:
    """Ranks per GPU on a log2 axis with a tick at each measured count."""
    if len(ranks) > 1 and min(ranks) > 0:
        ax.set_xscale("log", base=2)
    ax.set_xticks(ranks)
    ax.set_xticklabels([str(r) for r in ranks])
    ax.minorticks_off()
    ax.set_xlabel(f"ranks per {word}")


def nothing_to_plot(fig: Figure, ax, what: str) -> Figure:
    ax.text(0.5, 0.5, f"no successful result to plot ({what})", ha="center", va="center", transform=ax.transAxes)
    ax.set_axis_off()
    return fig


def subject_name(kernel: str, precision: str, params: str | None) -> str:
    """'matmul fp32', or 'inference fp16 (hidden=2048,layers=4)' for a kernel with params."""
    return f"{kernel} {precision}" + (f" ({params})" if params else "")


def with_params(df, params: str | None):
    """Rows of ``df`` with these params (all rows for None)."""
    return df if params is None or "params" not in df else df[df["params"] == params]


def freeze_layout(fig: Figure) -> None:
    """Lays the figure out once (constrained layout) and keeps it there, so that texts placed next
    from pixel positions stay where they were checked."""
    fig.canvas.draw()
    fig.set_layout_engine("none")


def figure_title(fig: Figure) -> str:
    """The figure's title on one line (for alt texts)."""
    title = fig._suptitle.get_text() if fig._suptitle is not None else ""
    return " ".join(title.replace("\u00a0", " ").split())
