"""The sharing modes: one registry that the sweep, the analysis and the report read.

A mode is how the k instances of a configuration share one GPU. Each entry says what the mode is
(MPS client or not, one process or one per instance), whether the sweep runs it and by default,
which mpsbench --mode runs it, which field of a result joins its label (mps-qos at a thread
percentage, mps-mem at a memory limit), what a copy's CUDA context must report under it, and how
it looks in every figure. The order of the registry is the display order everywhere.

Adding a mode: one entry here, one in the C++ table (harness/sharing, `mpsbench --list-modes`), and
the schema's enum (schema/mpsbench-results.schema.json, result.mode); a test holds the three
together (tests/sweep/test_modes_agree.py).

Colours are the Okabe-Ito palette (Okabe & Ito 2008, "Color Universal Design"), chosen to stay apart
for readers with any of the common colour vision deficiencies. Several are about equally light, so in
grey (a printout, a projector) colour alone does not tell the modes apart: each mode also has its own
marker, line style and box hatch.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass
from typing import Any, Mapping

#: The Okabe-Ito palette, by its names.
OKABE_ITO = {
    "orange": "#E69F00", "sky blue": "#56B4E9", "bluish green": "#009E73", "yellow": "#F0E442",
    "blue": "#0072B2", "vermillion": "#D55E00", "reddish purple": "#CC79A7", "black": "#000000",
}


@dataclass(frozen=True)
class Style:
    """How one mode label is drawn: colour (hex), marker, line style (matplotlib), box hatch, and the
    line style as an SVG stroke-dasharray for the report's key."""

    color: str
    marker: str
    linestyle: str | tuple
    hatch: str
    dash_css: str

    @property
    def line_kwargs(self) -> dict[str, Any]:
        return {"color": self.color, "marker": self.marker, "linestyle": self.linestyle}


@dataclass(frozen=True)
class Mode:
    name: str               # result.mode, --modes, mpsbench --mode (where engine_mode is itself)
    description: str        # one line, for --help and the report's key
    mps: bool               # the instances are MPS clients: the sweep starts its MPS daemon for this mode
    one_process: bool       # the k instances run on threads of one process per GPU (streams, green)
    sweep: bool             # mpsbench-sweep --modes accepts it
    default: bool           # in the sweep's default --modes
    engine_mode: str | None  # what mpsbench --mode runs it as; None: not an mpsbench mode of its own
    label_field: str | None  # the result field whose value joins the label ("mps-qos:50%", "mps-mem:2G")
    style: Style

    @property
    def expects_mps_client(self) -> bool | None:
        """What a copy's CUDA context must report (CU_DEVICE_ATTRIBUTE_MPS_ENABLED): True, False, or None
        where the mode does not say (results-only modes)."""
        if not self.sweep:
            return None
        return self.mps


_S = Style
MODES: tuple[Mode, ...] = (
    Mode("timeslice", "one process per instance, no MPS: the driver time-slices the GPU between contexts",
         mps=False, one_process=False, sweep=True, default=True, engine_mode="timeslice", label_field=None,
         style=_S(OKABE_ITO["blue"], "o", "-", "", "")),
    Mode("mps", "one process per instance, each an MPS client of one server per GPU",
         mps=True, one_process=False, sweep=True, default=True, engine_mode="mps", label_field=None,
         style=_S(OKABE_ITO["vermillion"], "s", "--", "//", "6,3")),
    Mode("mps-qos", "MPS clients capped by CUDA_MPS_ACTIVE_THREAD_PERCENTAGE (100/k % unless given)",
         mps=True, one_process=False, sweep=True, default=True, engine_mode="mps-qos",
         label_field="mps_active_thread_percentage",
         style=_S(OKABE_ITO["bluish green"], "^", "-.", "..", "6,2,1.5,2")),
    Mode("mps-mem", "MPS clients with CUDA_MPS_PINNED_DEVICE_MEM_LIMIT (the sweep's --mem-limits)",
         mps=True, one_process=False, sweep=True, default=False, engine_mode="mps",
         label_field="mps_pinned_device_mem_limit",
         style=_S(OKABE_ITO["yellow"], "v", (0, (6, 2, 1, 2, 1, 2)), "\\\\//", "6,2,1,2,1,2")),
    Mode("streams", "k instances on k streams and threads of one process per GPU (the in-process reference)",
         mps=False, one_process=True, sweep=True, default=True, engine_mode="streams", label_field=None,
         style=_S(OKABE_ITO["reddish purple"], "D", ":", "\\\\", "1.5,2")),
    Mode("green", "k instances in one process, each in a CUDA green context of 1/k of the SMs",
         mps=False, one_process=True, sweep=True, default=False, engine_mode="green", label_field=None,
         style=_S(OKABE_ITO["sky blue"], "*", (0, (3, 1, 1, 1)), "++", "3,1,1,1")),
    Mode("mixed", "mpsbench --mode auto found MPS clients and plain contexts among the active ranks",
         mps=False, one_process=False, sweep=False, default=False, engine_mode=None, label_field=None,
         style=_S(OKABE_ITO["orange"], "X", (0, (6, 2, 1.5, 2, 1.5, 2)), "xx", "6,2,1.5,2,1.5,2")),
    Mode("cpu", "the CPU device: one process per instance, no GPU to share",
         mps=False, one_process=False, sweep=False, default=False, engine_mode=None, label_field=None,
         style=_S(OKABE_ITO["black"], "P", (0, (10, 3)), "--", "10,3")),
)
BY_NAME: dict[str, Mode] = {m.name: m for m in MODES}
NAMES: tuple[str, ...] = tuple(m.name for m in MODES)
SWEEP_MODES: tuple[str, ...] = tuple(m.name for m in MODES if m.sweep)
DEFAULT_SWEEP_MODES: tuple[str, ...] = tuple(m.name for m in MODES if m.default)
MPS_MODES: tuple[str, ...] = tuple(m.name for m in MODES if m.mps)
ONE_PROCESS_MODES: tuple[str, ...] = tuple(m.name for m in MODES if m.one_process)

#: Labels outside the registry (a newer file): grey, with a marker and dashes of their own.
OTHER_STYLE = Style("#999999", "h", (0, (2, 2)), "..", "2,2")
_QOS_MARKERS = ["^", "v", "<", ">", "p", "h", "8"]
_MEM = re.compile(r"([0-9]+)([KMG])B?", re.IGNORECASE)
_MEM_UNITS = {"K": 2.0**10, "M": 2.0**20, "G": 2.0**30}


def mode(name: str) -> Mode | None:
    return BY_NAME.get(name)


def label(result: Mapping[str, Any]) -> str:
    """The mode a result is grouped under: its mode, with the value of the mode's label field when the
    record has one (``mps-qos:50%``, ``mps-mem:2G``). Two labels are two configurations."""
    name = str(result.get("mode"))
    m = BY_NAME.get(name)
    value = result.get(m.label_field) if m and m.label_field else None
    if isinstance(value, bool) or value is None or value == "":
        return name
    if isinstance(value, (int, float)):
        return f"{name}:{value:g}%"
    return f"{name}:{value}"


def split_label(text: str) -> tuple[str, str]:
    """``mps-qos:50%`` -> (``mps-qos``, ``50%``); ``mps`` -> (``mps``, "")."""
    base, _, value = text.partition(":")
    return base, value


def _label_number(value: str) -> float:
    size = _MEM.fullmatch(value)
    if size:
        return float(size.group(1)) * _MEM_UNITS[size.group(2).upper()]
    try:
        return float(value.rstrip("%")) if value else -1.0
    except ValueError:
        return -1.0


def sort_key(text: str) -> tuple[int, float, str]:
    """Orders mode labels as the registry does, a mode's labels by their value (percentage, limit)."""
    base, value = split_label(text)
    return (NAMES.index(base) if base in BY_NAME else len(NAMES), _label_number(value), text)


def _mix(color: str, target: str, amount: float) -> str:
    """``color`` moved ``amount`` (0..1) of the way towards ``target``."""
    a = [int(color[i:i + 2], 16) for i in (1, 3, 5)]
    b = [int(target[i:i + 2], 16) for i in (1, 3, 5)]
    return "#" + "".join(f"{round(x + (y - x) * amount):02X}" for x, y in zip(a, b))


def _qos_style(percentage: float) -> Style:
    """mps-qos at a percentage keeps the mps-qos family, darker for a smaller share; the marker follows
    the halving step (100, 50, 25, 12.5 %: ^, v, <, >)."""
    base = BY_NAME["mps-qos"].style
    p = min(max(percentage, 1.0), 100.0)
    step = math.log2(100.0 / p)
    if step <= 1:
        color = _mix(base.color, "#FFFFFF", 0.4 * (1 - step))
    else:
        color = _mix(base.color, "#000000", min(0.7, 0.3 + 0.25 * (step - 2)))
    return Style(color, _QOS_MARKERS[min(round(step), len(_QOS_MARKERS) - 1)], base.linestyle, base.hatch,
                 base.dash_css)


def style(text: str) -> Style:
    """The style of a mode label; it depends on the label alone, so a mode looks the same in every figure."""
    base, value = split_label(text)
    if base == "mps-qos" and value:
        try:
            return _qos_style(float(value.rstrip("%")))
        except ValueError:
            pass
    m = BY_NAME.get(base)
    return m.style if m else OTHER_STYLE
