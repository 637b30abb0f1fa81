"""Refuses JSON values that no mpsbench writer produces, anywhere in a file.

The JSON Schema checks types and ranges, but Python's json module also reads
``NaN``, ``Infinity`` and numbers too large for a double (``1e999`` becomes
``inf``), and a NaN passes every ``minimum``.  mpsbench writes a non-finite
double as ``null`` (nlohmann::json), and mpsbench-sweep copies its parts, so
a non-finite number anywhere in a results file means the file is corrupted;
so do integers outside the 64-bit range the writers use, strings that are
not valid Unicode (lone surrogates cannot be printed or written out) and
nesting far deeper than the format's.  The walk is iterative: a document
nested deep enough to break a recursive walk is exactly what it must report.
"""

from __future__ import annotations

import math
from typing import Any, Iterable

from .errors import AnalysisError

#: The format nests about 7 levels; anything beyond this is not a results file.
MAX_DEPTH = 64

#: No measured quantity comes near this (an exaFLOP/s is 1e18), and the
#: statistics square values, which overflows a double beyond about 1e154.
MAX_MAGNITUDE = 1e100

#: int64 and uint64, the integer types of the writers.
_INT_MIN, _INT_MAX = -(2**63), 2**64 - 1


def path_text(path: Iterable[Any]) -> str:
    """``results[3].ranks[0].iteration_time_s`` from a sequence of keys and indices."""
    out = ""
    for part in path:
        out += f"[{part}]" if isinstance(part, int) else (f".{part}" if out else str(part))
    return out


def _problem(value: Any) -> str | None:
    """Why a scalar is not something a writer produces; None when it is fine."""
    if isinstance(value, float):
        if math.isnan(value):
            return "not a finite number (NaN)"
        if math.isinf(value):
            return "not a finite number (Infinity, or too large for a double)"
        if abs(value) > MAX_MAGNITUDE:
            return f"{value:g} is out of range (magnitude above {MAX_MAGNITUDE:g})"
    elif isinstance(value, int) and not isinstance(value, bool):
        if not _INT_MIN <= value <= _INT_MAX:
            return "integer out of the 64-bit range"
    elif isinstance(value, str) and not value.isascii():
        try:
            value.encode("utf-8")
        except UnicodeEncodeError:
            return "string is not valid Unicode (a lone surrogate escape)"
    return None


def check_values(doc: Any, name: str) -> None:
    """Raises AnalysisError naming the first bad value's field (see the module doc)."""
    stack: list[tuple[Any, tuple[Any, ...]]] = [(doc, ())]
    while stack:
        node, path = stack.pop()
        if len(path) > MAX_DEPTH:
            raise AnalysisError(f"nested too deeply (more than {MAX_DEPTH} levels)", name,
                                path_text(path[:8]) + "...")
        if isinstance(node, dict):
            for key, value in reversed(node.items()):  # reversed: report the first problem in file order
                why = _problem(key)
                if why is not None:
                    raise AnalysisError(f"key: {why}", name, path_text(path) or "(document)")
                stack.append((value, path + (key,)))
        elif isinstance(node, list):
            stack.extend((value, path + (i,)) for i, value in reversed(list(enumerate(node))))
        else:
            why = _problem(node)
            if why is not None:
                raise AnalysisError(why, name, path_text(path) or "(document)")
