"""Numbers and lists from the command line and the environment: ASCII decimal only, one line on error.

Python's int() and str.isdigit() accept far more than the digits 0-9: "²" passes isdigit() and
makes int() raise, "３" (full width) and "٣" (Arabic-Indic) become 3, " 3", "+3" and "3_000" are
integers too. What the sweep passes on (to mpsbench, to mpirun, into a file) must be what it
checked, so every integer it reads (options, --mix counts, --gpus, SLURM_NNODES, answers of the MPS
control program) goes through integer() here, and every number of seconds through seconds():
a value that is not plain ASCII decimal is an InputError naming it (exit status 2), never a
traceback.
"""
import math
import re

from .text import quoted

_DECIMAL = re.compile(r"[0-9]+", re.ASCII)
# Plain decimal, an optional fraction and exponent; no sign, no spaces, no "inf" or "nan".
_REAL = re.compile(r"(?:[0-9]+(?:\.[0-9]*)?|\.[0-9]+)(?:[eE][+-]?[0-9]+)?", re.ASCII)


class InputError(Exception):
    """Bad input or a preflight failure: one line, exit status 2."""


def is_decimal(text):
    return isinstance(text, str) and _DECIMAL.fullmatch(text) is not None


def decimal_or_none(text):
    """The value of ASCII decimal text, None for anything else (environment values, daemon answers)."""
    return int(text) if is_decimal(text) else None


def integer(flag, text, low, high):
    """ASCII decimal text in [low, high], else InputError naming flag and the value."""
    if not is_decimal(text):
        raise InputError(f"{flag}: {quoted(text)} is not a whole number (ASCII digits 0-9)")
    value = int(text)
    if not low <= value <= high:
        raise InputError(f"{flag}: {value} is out of range [{low}, {high}]")
    return value


def seconds(flag, text, low_exclusive=0.0, high=1e6):
    """A finite decimal number of seconds in (low_exclusive, high]."""
    if not isinstance(text, str) or _REAL.fullmatch(text) is None:
        raise InputError(f"{flag}: {quoted(text)} is not a number (e.g. 10, 0.5)")
    value = float(text)
    if not math.isfinite(value) or not low_exclusive < value <= high:
        raise InputError(f"{flag}: {text} must be in ({low_exclusive:g}, {high:g}]")
    return value


def items(flag, text):
    """The comma-separated items of text (ASCII spaces around them dropped); no empty item."""
    parts = [t.strip(" ") for t in text.split(",")]
    if not text or any(not t for t in parts):
        raise InputError(f"{flag}: empty item in {quoted(text)}")
    return parts


def integer_list(flag, text, low, high):
    """Sorted distinct integers of a comma list."""
    return sorted({integer(flag, item, low, high) for item in items(flag, text)})


def choice_list(flag, text, choices):
    """Distinct items of a comma list, each one of choices, in the order given."""
    out = []
    for item in items(flag, text):
        if item not in choices:
            raise InputError(f"{flag}: unknown value {quoted(item)} (choose from {', '.join(choices)})")
        if item not in out:
            out.append(item)
    return out
