"""A farmed application's energy per unit of work (mpsbench-sweep --app): one definition, which the sweep writes
(harness/sweep/mpsbench_sweep/app/energy.py) and the analysis checks (mpsbench_analysis.energy_consistency).

Energy per unit is the energy of the span in which the units were done, divided by those units; never a rate
multiplied by a span it was not measured over.

* runs (no figure of the program's own): J per run = the GPUs' energy over the timed windows / the runs counted
  in them. Each window is metered whole, so it holds every counted run whole: ``joules_per_unit`` is J per run.
* ``--app-metric``: the program prints a rate it measured over a stretch of its run that the sweep does not know
  (its start-up and teardown lie in every metered window, at whatever power they draw), so the energy of the
  units it did is unknown: J per run is given (``joules_per_run``) and J per unit is unavailable
  (:data:`METRIC_REASON`).
* ``--app-progress``: each node's meter spans the node's common stretch (progress.py: it starts when the last of
  the node's copies prints its first counter line and stops when the first copy's run ends). The units done in
  it are each copy's counter increase over it (:func:`counter_work`, linear between its lines), summed over the
  copies. J per unit = the spans' energy / those units (``work``). The span ends with the first run to end, after
  that run's last counter line: what the run does then (teardown, writing output) is metered with no unit
  counted. Where that tail is more than :data:`TAIL_SHARE_MAX` of a span, J per unit is unavailable with the
  reason (:func:`tail_problem`): with the tail drawing no more power than the loop, it raises J per unit by at
  most its share, so a figure that is given is at most that much above the energy around the work loop.
"""

from __future__ import annotations

import math
from typing import Sequence

#: The most of a metered span that may lie after a copy's last counter line (module doc).
TAIL_SHARE_MAX = 0.05
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


def tail_problem(tail_s: float, span_s: float) -> str | None:
    """Why J per unit of an --app-progress span cannot be given (module doc), else None: tail_s of the span_s
    metered seconds came after the first copy's last counter line."""
    if span_s > 0 and tail_s <= TAIL_SHARE_MAX * span_s:
        return None
    share = tail_s / span_s if span_s > 0 else 1.0
    return (f"--app-progress: a metered span went on {tail_s:.2f} s ({share:.0%} of its {span_s:.2f} s) after a "
            f"copy's last counter line, until its run ended (teardown, writing output: energy with no unit "
            f"counted), more than {TAIL_SHARE_MAX:.0%}; give each run more counted work against what it does "
            "after its last counter line")


def span_problem(meter_span_s: object, start: float, stop: float) -> str | None:
    """Why the meter's span is not the stretch from start to stop that the counters give (so their work is not
    the work of the metered energy), else None."""
    if not _positive(meter_span_s):
        return "mpsbench-meter gave no span"
    expected = stop - start
    if abs(float(meter_span_s) - expected) <= SPAN_TOLERANCE_S + SPAN_TOLERANCE * expected:
        return None
    return (f"the meter's span ({float(meter_span_s):.3f} s) is not the copies' common stretch ({expected:.3f} s, "
            "from the last copy's first counter line to the first run's end) that the counters' work is taken over")
