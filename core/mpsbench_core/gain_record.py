"""What a merged results file records of its MPS gains: ``context.sweep.gains``, one entry per configuration
measured in mps and timeslice, with its 95 % interval and what the interval is made of (intervals.Interval:
rounds, basis, degrees of freedom, t, standard error, own and pooled spread, the repetitions' floor).

mpsbench-sweep writes it with :func:`gain_entries` from the file's own records; the analysis re-derives it with
the same function and refuses a file whose entries disagree (:func:`first_difference`), so a gain interval in
a file is always the one its records give.
"""

from __future__ import annotations

import math
from typing import Any, Iterable, Mapping

from .records import Result
from .rounds import gain_intervals

#: Relative tolerance of a re-derived figure (the same arithmetic on the same doubles: only JSON's rounding).
TOLERANCE = 1e-9


def gain_entries(results: Iterable[Result]) -> list[dict[str, Any]]:
    out = []
    for ((kind, name, precision, params), size, k), interval in gain_intervals(results).items():
        out.append({"kind": kind, "name": name, "precision": precision, "params": params, "size": size,
                    "ranks_per_gpu": k, "mode": "mps", "interval": interval.to_json()})
    return out


def _key(e: Mapping[str, Any]) -> tuple:
    return tuple(e.get(f) for f in ("kind", "name", "precision", "params", "size", "ranks_per_gpu", "mode"))


def _same(a: Any, b: Any) -> bool:
    if isinstance(a, (int, float)) and isinstance(b, (int, float)) and not isinstance(a, bool):
        return a == b or math.isclose(a, b, rel_tol=TOLERANCE)
    return a == b


def first_difference(written: Any, results: Iterable[Result]) -> tuple[str, Any, Any] | None:
    """(where, written value, re-derived value) of the first disagreement of ``written`` (the file's
    context.sweep.gains) with what its records give; None when they agree."""
    derived = gain_entries(results)
    if not isinstance(written, list):
        return "", written, "a list"
    by_key = {_key(e): (i, e) for i, e in enumerate(written) if isinstance(e, Mapping)}
    for e in derived:
        found = by_key.pop(_key(e), None)
        if found is None:
            return f"[{len(written)}]", "missing", f"{e['name']} {e['precision']} {e['size']} k={e['ranks_per_gpu']}"
        i, w = found
        got = w.get("interval") if isinstance(w.get("interval"), Mapping) else {}
        for field, value in e["interval"].items():
            if not _same(got.get(field), value):
                return f"[{i}].interval.{field}", got.get(field), value
    if by_key:
        i, w = next(iter(by_key.values()))
        return f"[{i}]", "an entry", "no such gain in the records"
    return None
