"""A farmed application's energy per unit of work (mpsbench-sweep --app): one definition, which the sweep writes
(harness/sweep/mpsbench_sweep/app/energy.py) and the analysis checks (mpsbench_analysis.derived).

Energy per unit is the energy of the span in which the units were done, divided by those units; never a rate
multiplied by a span it was not measured over.

* runs (no figure of the program's own): J per run = the GPUs' energy over the timed windows / the runs counted
  in them. Each window is metered whole, so it holds every counted run whole: ``joules_per_unit`` is J per run.
* ``--app-metric``: the program prints a rate it measured over a stretch of its run that the sweep does not know
  (its start-up and teardown lie in every metered window, at whatever power they draw), so the energy of the
  units it did is unknown: J per run is given (``joules_per_run``) and J per unit is unavailable
  (:data:`METRIC_REASON`).
* ``--app-progress``: each node's meter spans the node's counted stretch (progress.py): it starts when the last
  of the node's copies prints its first counter line and ends at the earliest of the copies' last counter lines
  up to the end of the node's first run to end (:func:`span_end`; the farmer tells the meter so when that run
  ends: ``stop AGO``). So what a run does after its last counter line (teardown, writing output) is never
  metered with no unit counted, however long it takes. The units done in the span are each copy's counter
  increase over it (:func:`counter_work`, linear between its lines), summed over the copies. J per unit = the
  spans' energy / those units (``work``).
"""

from __future__ import annotations

import math
from typing import Sequence

#: How far the meter's span may be from the stretch the counters say it covered (pipe and scheduling delays).
SPAN_TOLERANCE_S = 0.1
SPAN_TOLERANCE = 0.02

METRIC_REASON = ("--app-metric: the program's rate was measured over a stretch of its run that the sweep does not "
                 "know (each metered window holds its start-up and teardown too), so the energy of the units it "
                 "did is unknown; joules_per_run is the energy per run, and --app-progress (a counter the program "
                 "prints as it goes) gives the energy per unit")


def _positive(value: object) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value) and value > 0


def counter_at(samples: Sequence[Sequence[float]], t: float) -> float:
    """A cumulative counter at time t from its lines [(time, value), ...] in time order: linear between the
    lines around t, its first value before them and its last after them (nothing is counted outside them)."""
    if t <= samples[0][0]:
        return float(samples[0][1])
    for (t0, v0), (t1, v1) in zip(samples, samples[1:]):
        if t <= t1:
            return float(v0 if t1 == t0 else v0 + (v1 - v0) * (t - t0) / (t1 - t0))
    return float(samples[-1][1])


def counter_work(samples: Sequence[Sequence[float]], start: float, stop: float) -> float:
    """The units a counter went up by from start to stop (counter_at at both ends)."""
    return counter_at(samples, stop) - counter_at(samples, start)


def per_unit(joules: object, work: object) -> float | None:
    """Joules per unit of work: joules / work; None unless both are positive numbers."""
    return float(joules) / float(work) if _positive(joules) and _positive(work) else None


def span_end(lines: Sequence[Sequence[Sequence[float]]], first_run_end: float) -> float | None:
    """Where a node's metered span ends (module doc): the earliest of its copies' last counter lines at or before
    first_run_end (when the node's first run to end ended); lines: each copy's [(time, value), ...] in time
    order. None where a copy printed no counter line by then."""
    lasts = []
    for samples in lines:
        before = [t for t, _ in samples if t <= first_run_end]
        if not before:
            return None
        lasts.append(max(before))
    return min(lasts) if lasts else None


def no_span(start: float, end: float | None) -> str | None:
    """Why a node's copies had no counted span from start (the last copy's first counter line) to end
    (:func:`span_end`), else None."""
    if end is not None and end > start:
        return None
    return ("--app-progress: the copies were never all counting at once (a copy printed its last counter line "
            "before the last one printed its first): no span holds the units of every copy; give each run more "
            "counted work against its start-up")


def span_problem(meter_span_s: object, start: float, stop: float) -> str | None:
    """Why the meter's span is not the stretch from start to stop that the counters give (so their work is not
    the work of the metered energy), else None."""
    if not _positive(meter_span_s):
        return "mpsbench-meter gave no span"
    expected = stop - start
    if abs(float(meter_span_s) - expected) <= SPAN_TOLERANCE_S + SPAN_TOLERANCE * expected:
        return None
    return (f"the meter's span ({float(meter_span_s):.3f} s) is not the copies' common stretch ({expected:.3f} s, "
            "from the last copy's first counter line to the earliest last one) that the counters' work is taken over")
