"""What a person sees in a matplotlib figure, from matplotlib's own extents.

After ``fig.canvas.draw()`` every text, legend and axes has a window extent
in pixels.  A figure reads right when no text leaves the canvas (a clipped
title), no two texts overlap (a legend title over its entries, a tick label
over the neighbouring panel's axis label), and no text or legend lies over
another panel's plotting area.  :func:`problems` lists what is wrong, in
words a failing test can print.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

import matplotlib.pyplot as plt
import numpy as np

from matplotlib.figure import Figure
from matplotlib.transforms import Bbox

#: Pixels two boxes may share (antialiasing, rounding of the extents).
TOLERANCE = 1.0


@dataclass
class Box:
    """One thing drawn: what it is (for messages), which axes it belongs to (None: the figure), its extent."""

    name: str
    owner: Any
    bbox: Bbox
    group: str  # boxes of one group (a legend's parts, an axes' own area) are compared only where asked
    text: str = ""  # what it says, for a text


def _visible_text(t: Any) -> bool:
    return t is not None and t.get_visible() and bool(t.get_text().strip())


def _tick_labels(ax: Any) -> list[tuple[str, Any]]:
    out = []
    for axis_name, axis in (("x", ax.xaxis), ("y", ax.yaxis)):
        for tick in axis._update_ticks():  # the ticks drawn: inside the view limits
            for label in (tick.label1, tick.label2):
                if _visible_text(label):
                    out.append((f"{axis_name} tick label {label.get_text()!r}", label))
    return out


def _legend_boxes(legend: Any, owner: Any, where: str, renderer: Any) -> tuple[Box, list[Box]]:
    """The legend's frame as one box, and its title and entries for the check inside it."""
    frame = Box(f"{where} legend", owner, legend.get_window_extent(renderer), "legend")
    inner = []
    title = legend.get_title()
    if _visible_text(title):
        inner.append(Box(f"{where} legend title {title.get_text()!r}", legend, title.get_window_extent(renderer),
                         "legend-inner", title.get_text()))
    for text in legend.get_texts():
        if _visible_text(text):
            inner.append(Box(f"{where} legend entry {text.get_text()!r}", legend, text.get_window_extent(renderer),
                             "legend-inner", text.get_text()))
    for handle, text in zip(legend.legend_handles, legend.get_texts()):
        if handle is not None and handle.get_visible():
            try:
                extent = handle.get_window_extent(renderer)
            except (TypeError, NotImplementedError):
                continue
            if extent.width > 0 and extent.height > 0:
                inner.append(Box(f"{where} legend marker of {text.get_text()!r}", legend, extent, "legend-handle"))
    return frame, inner


def boxes(fig: Figure) -> tuple[list[Box], list[Box], list[Box]]:
    """(texts and legends, legend insides, axes areas) of a drawn figure."""
    fig.canvas.draw()
    renderer = fig.canvas.get_renderer()
    texts: list[Box] = []
    inner: list[Box] = []
    areas: list[Box] = []
    seen = set()
    for t in [fig._suptitle, fig._supxlabel, fig._supylabel, *fig.texts]:  # the suptitle is in fig.texts too
        if _visible_text(t) and id(t) not in seen:
            seen.add(id(t))
            texts.append(Box(f"figure text {t.get_text()!r}", None, t.get_window_extent(renderer), "text",
                             t.get_text()))
    for legend in fig.legends:
        if legend.get_visible():
            frame, parts = _legend_boxes(legend, None, "figure", renderer)
            texts.append(frame)
            inner += parts
    for i, ax in enumerate(fig.axes):
        if not ax.get_visible():
            continue
        where = f"axes {i} ({ax.get_label() or ax.get_title() or 'untitled'})"
        areas.append(Box(f"{where} plotting area", ax, ax.bbox, "area"))
        for kind, t in (("title", ax.title), ("left title", ax._left_title), ("right title", ax._right_title),
                        ("x label", ax.xaxis.label), ("y label", ax.yaxis.label)):
            if _visible_text(t) and (ax.axison or kind.endswith("title")):
                texts.append(Box(f"{where} {kind} {t.get_text()!r}", ax, t.get_window_extent(renderer), "text",
                                 t.get_text()))
        for name, t in _tick_labels(ax) if ax.axison else []:
            texts.append(Box(f"{where} {name}", ax, t.get_window_extent(renderer), "text", t.get_text()))
        for t in ax.texts:
            if _visible_text(t):
                texts.append(Box(f"{where} annotation {t.get_text()!r}", ax, t.get_window_extent(renderer),
                                 "annotation", t.get_text()))
        legend = ax.get_legend()
        if legend is not None and legend.get_visible():
            frame, parts = _legend_boxes(legend, ax, where, renderer)
            texts.append(frame)
            inner += parts
    return texts, inner, areas


def _overlap(a: Bbox, b: Bbox) -> float:
    """The smaller side of the intersection in pixels; <= 0 when they do not meet."""
    return min(min(a.x1, b.x1) - max(a.x0, b.x0), min(a.y1, b.y1) - max(a.y0, b.y0))


def problems(fig: Figure, drawn: tuple[list[Box], list[Box], list[Box]] | None = None) -> list[str]:
    """Everything that would look wrong: off the canvas, overlapping, or over a plotting area.

    ``drawn``: what :func:`boxes` gave for this figure, to spare a second draw.
    """
    texts, inner, areas = drawn or boxes(fig)
    width, height = fig.canvas.get_width_height()
    out = []
    for box in texts + inner + areas:
        b = box.bbox
        if b.x0 < -TOLERANCE or b.y0 < -TOLERANCE or b.x1 > width + TOLERANCE or b.y1 > height + TOLERANCE:
            out.append(f"{box.name} leaves the {width}x{height} canvas: x {b.x0:.0f}..{b.x1:.0f}, "
                       f"y {b.y0:.0f}..{b.y1:.0f}")
    for i, a in enumerate(texts):
        for b in texts[i + 1:]:
            if _overlap(a.bbox, b.bbox) > TOLERANCE:
                out.append(f"{a.name} overlaps {b.name}")
    for i, a in enumerate(inner):  # inside a legend: title vs entries, entries vs each other
        for b in inner[i + 1:]:
            if a.owner is b.owner and not (a.group == b.group == "legend-handle") \
                    and _overlap(a.bbox, b.bbox) > TOLERANCE:
                out.append(f"{a.name} overlaps {b.name}")
    for area in areas:
        for box in texts:
            if box.owner is not area.owner and _overlap(area.bbox, box.bbox) > TOLERANCE:
                out.append(f"{box.name} lies over {area.name}")
    for i, a in enumerate(areas):
        for b in areas[i + 1:]:
            if _overlap(a.bbox, b.bbox) > TOLERANCE:
                out.append(f"{a.name} overlaps {b.name}")
    return out


def inspect(fig: Figure, png: Path | None = None) -> tuple[list[str], str]:
    """(problems, every visible text one per line) from one draw; ``png``: also save what was drawn there."""
    drawn = boxes(fig)
    if png is not None:  # the pixels of this very draw, not a second rendering
        plt.imsave(png, np.asarray(fig.canvas.buffer_rgba()))
    texts, inner, _ = drawn
    return problems(fig, drawn), "\n".join(b.text for b in texts + inner if b.text)
