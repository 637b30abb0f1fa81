"""The verdict of results files: the one definition of mpsbench_core.verdict, at the gain threshold the run
recorded.

``mpsbench-analyze verdict FILE`` prints exactly the lines mpsbench-sweep printed at the end of the run
that made FILE, and the report and the crossover command say the same sentences: all of them take
their verdicts from :func:`file_verdicts`, which hands the files' records to core.  The threshold is
``--threshold`` when given, else the one the run recorded (``context.sweep.gain_threshold``, written by
mpsbench-sweep's ``--gain-threshold``), else core's GAIN_THRESHOLD; files that recorded different
thresholds need ``--threshold`` (one verdict has one threshold).
"""

from __future__ import annotations

import math
from typing import Any

from mpsbench_core.aa_check import aa_check
from mpsbench_core.sweep_settings import recorded_threshold
from mpsbench_core.verdict import GAIN_THRESHOLD, Verdict, verdict_lines, verdicts

from .errors import AnalysisError
from .loader import ResultSet

#: Where a run records its threshold.
RECORDED = "context.sweep.gain_threshold"


def _recorded(context: dict[str, Any], name: str) -> float | None:
    """The threshold one file's run recorded, as core reads it (sweep_settings.recorded_threshold, the
    sweep's own definition); None where it recorded none.  A recorded value core would not use (not a finite
    positive number) is refused here, naming the field, rather than silently replaced by the default."""
    sweep = context.get("sweep")
    if not isinstance(sweep, dict) or "gain_threshold" not in sweep:
        return None
    value = sweep["gain_threshold"]
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value) or not value > 0:
        raise AnalysisError(f"expected a positive number, got {value!r}", name, RECORDED)
    return recorded_threshold({"context": context})


def files_threshold(rs: ResultSet) -> float | None:
    """The gain threshold the files' runs recorded (core's recorded_threshold per file); None when none did.
    Raises AnalysisError when one is not a positive number, or two files recorded different ones."""
    found: dict[float, str] = {}
    for name, context in rs.contexts.items():
        value = _recorded(context, name)
        if value is not None:
            found.setdefault(value, name)
    if len(found) > 1:
        (a, first), (b, second) = list(found.items())[:2]
        raise AnalysisError(f"gain threshold {b:g}, but {first} recorded {a:g}: give --threshold to judge them "
                            "together", second, RECORDED)
    return next(iter(found), None)


def threshold_for(rs: ResultSet, given: float | None = None) -> float:
    """``given``, else the recorded threshold, else GAIN_THRESHOLD."""
    if given is not None:
        return given
    recorded = files_threshold(rs)
    return GAIN_THRESHOLD if recorded is None else recorded


def file_verdicts(rs: ResultSet, threshold: float | None = None) -> list[Verdict]:
    """One verdict per kernel (precision, params), application (binding) and mix of the files, as core gives
    them."""
    return verdicts(rs.records(), threshold_for(rs, threshold))


def verdict_text(rs: ResultSet, threshold: float | None = None) -> str:
    """What ``mpsbench-analyze verdict`` prints: core's verdict lines and the A/A row, as the sweep printed them."""
    aa = aa_check(rs.records()).line
    lines = verdict_lines(file_verdicts(rs, threshold)) + ([aa] if aa else [])
    return "".join(line + "\n" for line in lines)
