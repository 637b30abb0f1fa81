"""SI-prefixed numbers for people: 1.234e13 FLOP/s reads as 12.34 TFLOP/s.

Files keep base units (FLOP/s, seconds); scaling happens only on display,
and one axis or table column uses one prefix so values compare at a glance.
One unit of work is named in the singular (:func:`singular`: "steps/s" does
work in "step", shown "J/step"), in files and on display alike.
"""

from __future__ import annotations

import math
import re

_PREFIXES = [(1e18, "E"), (1e15, "P"), (1e12, "T"), (1e9, "G"), (1e6, "M"), (1e3, "k"), (1.0, "")]
_TIME = [(1.0, "s"), (1e-3, "ms"), (1e-6, "µs"), (1e-9, "ns")]


#: Words ending like plurals that name one thing as well.
_SAME = {"series", "species", "news"}


def singular(unit: str) -> str:
    """The unit of work as one of it is named, for "J per ..." and "the energy per ...": a rate's work is
    written as people write a rate ("steps/s", "images/min", "runs/hour"), but one unit of it is singular
    ("J/step", "J/image", "J/run"). The last word is made singular when it is an English plural of lower-case
    letters: "steps" -> "step", "queries" -> "query", "batches" -> "batch"; symbols and words that are no
    plural stay as they are: "ns", "ms", "it", "FLOP", "GB", "pass", "bus". One rule, used wherever a unit of
    work is named (core energy.py), so that every line says the same word."""
    head, space, word = unit.rpartition(" ")
    if len(word) < 3 or not re.fullmatch(r"[a-z]+", word) or word.endswith(("ss", "us", "is")) or word in _SAME:
        return unit
    if word.endswith("ies") and len(word) > 4:
        word = word[:-3] + "y"
    elif word.endswith(("sses", "ches", "shes", "xes", "zes")):
        word = word[:-2]
    elif word.endswith("s"):
        word = word[:-1]
    return head + space + word


def prefix_for(value: float) -> tuple[float, str]:
    """(factor, prefix) so that value / factor lies in [1, 1000) where possible."""
    if not math.isfinite(value) or value == 0:
        return 1.0, ""
    magnitude = abs(value)
    for factor, prefix in _PREFIXES:
        if magnitude >= factor:
            return factor, prefix
    return 1.0, ""


def prefixed_unit(prefix: str, unit: str) -> str:
    """'G' + 'FLOP/s' -> 'GFLOP/s'; 'G' + 'pairs/s' -> 'G pairs/s' (lowercase words stay readable)."""
    if not prefix:
        return unit
    return f"{prefix}{unit}" if unit[:1].isupper() else f"{prefix} {unit}"


def format_si(value: float | None, unit: str, decimals: int | None = None) -> str:
    """A value with an SI prefix for people: '48.2 TFLOP/s' (three significant digits), or with ``decimals``
    fixed decimals ('48.23 TFLOP/s'); '-' for a missing value (None, NaN)."""
    if value is None or not math.isfinite(value):
        return "-"
    factor, prefix = prefix_for(value)
    scaled = value / factor
    if decimals is None:
        decimals = 2 if abs(scaled) < 10 else 1 if abs(scaled) < 100 else 0
    return f"{scaled:.{decimals}f} {prefixed_unit(prefix, unit)}"


def format_count(value: float | None, unit: str) -> str:
    """A figure in a program's own unit, without SI prefixes (they read badly on "ns/day" or "steps/s"):
    '5,882 ns/day', '12.3 it/s', '0.456 images/s'; '-' when missing."""
    if value is None or not math.isfinite(value):
        return "-"
    if abs(value) >= 100:
        return f"{value:,.0f} {unit}"
    decimals = max(0, 2 - math.floor(math.log10(abs(value)))) if value else 2
    return f"{value:.{decimals}f} {unit}"


def format_ratio(value: float | None) -> str:
    """A gain or slowdown: '1.24x'; '-' when missing."""
    if value is None or not math.isfinite(value):
        return "-"
    return f"{value:.2f}x"


def time_scale(seconds: float) -> tuple[float, str]:
    """(factor, unit) for showing a duration in s, ms, µs or ns."""
    if not math.isfinite(seconds) or seconds <= 0:
        return 1.0, "s"
    for factor, unit in _TIME:
        if seconds >= factor:
            return factor, unit
    return 1e-9, "ns"


def format_number(value: float, digits: int = 3) -> str:
    """Fixed decimals with '-' for missing values (NaN, None)."""
    if value is None or (isinstance(value, float) and not math.isfinite(value)):
        return "-"
    return f"{value:.{digits}f}"


def format_percent(value: float, digits: int = 1, signed: bool = False) -> str:
    """0.123 -> '12.3%' ('+12.3%' when signed); '-' when missing."""
    if value is None or not math.isfinite(value):
        return "-"
    return f"{value * 100:{'+' if signed else ''}.{digits}f}%"


def format_seconds(seconds: float) -> str:
    """A duration in s, ms, µs or ns with three significant digits: '500 µs', '1.00 ms', '12.3 s'; '-' when missing."""
    if seconds is None or not math.isfinite(seconds):
        return "-"
    factor, unit = time_scale(seconds)
    value = seconds / factor
    decimals = max(0, 2 - math.floor(math.log10(abs(value)))) if value else 2
    return f"{value:.{decimals}f} {unit}"
