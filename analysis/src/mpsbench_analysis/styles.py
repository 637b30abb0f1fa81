"""One look per sharing mode, the same in every figure and in the HTML report.

Colours are the Okabe-Ito palette (Okabe & Ito 2008, "Color Universal
Design"), chosen to stay apart for readers with any of the common colour
vision deficiencies.  Several of them are about equally light, so in grey
(a printout, a projector) colour alone does not tell the modes apart: each
mode also has its own marker, line style and box hatch, and a line or box
can be told by those alone.

``mps-qos`` at a client thread percentage (label ``mps-qos:50%``) keeps the
mps-qos green and marker family, darker for a smaller percentage, so that
the percentages read as one mode at several strengths; the marker is picked
by the percentage's halving step (100, 50, 25, 12.5 %: ``^``, ``v``,
``<``, ``>``).  A label's style depends only on the label, never on which
other modes a file holds, so a mode looks the same in every figure.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

#: The Okabe-Ito palette, by its names.
OKABE_ITO = {
    "orange": "#E69F00", "sky blue": "#56B4E9", "bluish green": "#009E73", "yellow": "#F0E442",
    "blue": "#0072B2", "vermillion": "#D55E00", "reddish purple": "#CC79A7", "black": "#000000",
}


@dataclass(frozen=True)
class ModeStyle:
    """How one mode label is drawn: colour (hex), marker, line style, box hatch."""

    color: str
    marker: str
    linestyle: str | tuple
    hatch: str
    dash_css: str  # the line style as an SVG stroke-dasharray, for the report's key

    @property
    def line_kwargs(self) -> dict:
        return {"color": self.color, "marker": self.marker, "linestyle": self.linestyle}


#: The modes of the schema (result.mode).  Line styles: solid, dashed, dash-dot, dotted, dash-dot-dot, long dash.
MODE_STYLES: dict[str, ModeStyle] = {
    "timeslice": ModeStyle(OKABE_ITO["blue"], "o", "-", "", ""),
    "mps": ModeStyle(OKABE_ITO["vermillion"], "s", "--", "//", "6,3"),
    "mps-qos": ModeStyle(OKABE_ITO["bluish green"], "^", "-.", "..", "6,2,1.5,2"),
    "mps-mem": ModeStyle(OKABE_ITO["yellow"], "v", (0, (6, 2, 1, 2, 1, 2)), "\\\\//", "6,2,1,2,1,2"),
    "streams": ModeStyle(OKABE_ITO["reddish purple"], "D", ":", "\\\\", "1.5,2"),
    "green": ModeStyle(OKABE_ITO["sky blue"], "*", (0, (3, 1, 1, 1)), "++", "3,1,1,1"),
    "mixed": ModeStyle(OKABE_ITO["orange"], "X", (0, (6, 2, 1.5, 2, 1.5, 2)), "xx", "6,2,1.5,2,1.5,2"),
    "cpu": ModeStyle(OKABE_ITO["black"], "P", (0, (10, 3)), "--", "10,3"),
}
#: Labels outside the schema (none today): grey, with a marker and dashes of their own.
_OTHER = ModeStyle("#999999", "h", (0, (2, 2)), "..", "2,2")
_QOS_MARKERS = ["^", "v", "<", ">", "p", "h", "8"]


def _mix(color: str, target: str, amount: float) -> str:
    """``color`` moved ``amount`` (0..1) of the way towards ``target``."""
    a = [int(color[i:i + 2], 16) for i in (1, 3, 5)]
    b = [int(target[i:i + 2], 16) for i in (1, 3, 5)]
    return "#" + "".join(f"{round(x + (y - x) * amount):02X}" for x, y in zip(a, b))


def _qos_style(percentage: float) -> ModeStyle:
    base = MODE_STYLES["mps-qos"]
    p = min(max(percentage, 1.0), 100.0)
    step = math.log2(100.0 / p)  # 0 at 100 %, 1 at 50 %, 3 at 12.5 %
    # 100 %: a lighter green, 50 %: the mps-qos green, then darker with each halving
    if step <= 1:
        color = _mix(base.color, "#FFFFFF", 0.4 * (1 - step))
    else:
        color = _mix(base.color, "#000000", min(0.7, 0.3 + 0.25 * (step - 2)))
    return ModeStyle(color, _QOS_MARKERS[min(round(step), len(_QOS_MARKERS) - 1)], base.linestyle, base.hatch,
                     base.dash_css)


def mode_style(label: str) -> ModeStyle:
    """The style of a mode label (``mps``, ``mps-qos:50%``, ...); the same wherever it is drawn."""
    if label in MODE_STYLES:
        return MODE_STYLES[label]
    base, _, pct = label.partition(":")
    if base == "mps-qos":
        try:
            return _qos_style(float(pct.rstrip("%")))
        except ValueError:
            return MODE_STYLES["mps-qos"]
    return MODE_STYLES.get(base, _OTHER)


def mode_color(label: str) -> str:
    return mode_style(label).color
