"""Do several runs of the same suite give the same answer? (mpsbench-analyze agree FILE FILE ...)

What a user runs to check their own cluster: N results files of the same suite, each judged alone by the one
definition (verdict.py, rounds.gain_intervals), then held against each other:

* per configuration measured in mps and timeslice by two runs or more (kernels and applications): each run's
  MPS gain and whether it falls inside every other run's 95 % interval (and, counted each against each,
  inside each other run's interval on its own), and for each two runs whether their gains are
  **consistent**: differ by no more than their two intervals allow together (intervals.consistent);
* per verdict subject and point (a kernel's size, an application's copies per GPU): each run's class (pays
  off, does not, cannot tell); runs **contradict** each other where one says "pays off" and another "does
  not" ("cannot tell" contradicts nothing);
* each run's A/A row (aa_check.py);
* the **joint verdict**: the runs as the rounds of one data set, each run one round whose figure is the
  run's own (:func:`pooled`), judged by the same definition. A run's intervals come from its own rounds,
  which share its machine and its day, and cannot see what differs from one run to the next; the joint
  intervals come from the spread between the runs, so where the runs disagree the joint verdict says
  "cannot tell" rather than either run's answer.

The runs **agree** when no point is contradicted and at least AGREE_SHARE of the pairs of gains are
consistent; a run whose A/A row is flagged is said, but does not by itself make runs disagree. Not "inside
every other run's interval": a run's point is as noisy as the interval it is held against, so right
intervals fail that test far more often than their 5 % (84 % of points inside with three runs, 72 % with
five, 91 % each against each: tests/core/test_agreement_rates.py), while 95 % or more of consistent pairs
is what right intervals give. The shares inside are still counted and listed: they show which runs stand
apart.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Sequence

from .aa_check import AACheck, aa_check
from .intervals import Interval, consistent
from .records import Result
from .rounds import combined, configs, gain_intervals
from .series import PAYS, NOT
from .verdict import AppVerdict, KernelVerdict, Verdict, verdicts

#: The share of the pairs of two runs' gains that must be consistent (intervals.consistent).
AGREE_SHARE = 0.9


@dataclass(frozen=True)
class GainCell:
    """One configuration's gain in every run that measured it (None where a run did not)."""

    key: tuple                              # (subject, size, ranks per GPU)
    intervals: tuple[Interval | None, ...]

    def inside_others(self, i: int) -> bool | None:
        """Whether run i's gain is inside every other run's interval; None when run i or no other has one."""
        mine = self.intervals[i]
        others = [x for j, x in enumerate(self.intervals) if j != i and x is not None]
        if mine is None or not others:
            return None
        return all(o.contains(mine.point) for o in others)

    def pairs(self) -> list[tuple[int, int, bool]]:
        """(i, j, consistent) for every two runs i < j that both measured the gain."""
        found = [(i, x) for i, x in enumerate(self.intervals) if x is not None]
        return [(i, j, consistent(a, b)) for n, (i, a) in enumerate(found) for j, b in found[n + 1:]]

    @property
    def name(self) -> str:
        (kind, name, precision, params), size, k = self.key
        what = name if kind == "app" else f"{name} {precision}" + (f" ({params})" if params else "") + f" {size}"
        return f"{what} k={k}"


@dataclass(frozen=True)
class Contradiction:
    subject: str
    at: int
    classes: tuple[str | None, ...]          # per run: PAYS, NOT, CANNOT, or None (not judged there)


@dataclass(frozen=True)
class Agreement:
    runs: int
    cells: tuple[GainCell, ...]
    contradictions: tuple[Contradiction, ...]
    judged_points: int
    aa: tuple[AACheck, ...]
    joint: tuple[Verdict, ...] = ()  # the verdicts of pooled(runs)

    @property
    def inside(self) -> tuple[int, int]:
        """(gains inside every other run's interval, gains compared)."""
        found = [c.inside_others(i) for c in self.cells for i in range(self.runs)]
        found = [x for x in found if x is not None]
        return sum(found), len(found)

    @property
    def inside_pairs(self) -> tuple[int, int]:
        """(ordered pairs of runs i, j whose gain i lies inside j's interval, ordered pairs compared): each gain
        against each other run's interval on its own, where :attr:`inside` asks for all of them at once."""
        found = [o.contains(m.point) for c in self.cells for i, m in enumerate(c.intervals)
                 for j, o in enumerate(c.intervals) if i != j and m is not None and o is not None]
        return sum(found), len(found)

    @property
    def consistent(self) -> tuple[int, int]:
        """(pairs of two runs' gains that are consistent, pairs compared)."""
        found = [ok for c in self.cells for _, _, ok in c.pairs()]
        return sum(found), len(found)

    def inconsistent(self) -> list[tuple[GainCell, int, int]]:
        """(cell, i, j) for each two runs whose gains differ by more than their intervals allow."""
        return [(c, i, j) for c in self.cells for i, j, ok in c.pairs() if not ok]

    @property
    def agree(self) -> bool:
        ok, compared = self.consistent
        return not self.contradictions and compared > 0 and ok >= AGREE_SHARE * compared

    def outside(self) -> list[tuple[GainCell, int]]:
        """(cell, run) for each gain outside some other run's interval."""
        return [(c, i) for c in self.cells for i in range(self.runs) if c.inside_others(i) is False]


def pooled(runs: Sequence[Sequence[Result]]) -> list[Result]:
    """The runs as one data set of one round each: run i's configurations as round i, each its run's figure
    (rounds.combined: the geometric mean of its rounds' medians) with its run's within-run noise, so the
    spread between rounds that every interval is made of is the spread between runs."""
    out = []
    for i, run in enumerate(runs):
        found = configs(run)
        for c, r in zip(found, combined(found)):
            raw = dict(r.raw)
            raw["round"] = i
            raw.pop("turn_group", None)  # a run's figure is of all its rounds: not paired by repetition
            if isinstance(raw.get("noise"), dict):
                raw["noise"] = {**raw["noise"], "relative": c.noise}
            out.append(replace(r, raw=raw))
    return out


def _points(found: Sequence) -> dict[tuple[str, int], str]:
    """{(subject, point): class} of one run's kernel and application verdicts."""
    out = {}
    for v in found:
        if isinstance(v, (KernelVerdict, AppVerdict)):
            for p in v.points:
                out[(v.subject, p.at)] = p.verdict(v.threshold)
    return out


def agreement(runs: Sequence[Sequence[Result]], threshold: float) -> Agreement:
    """The agreement of ``runs`` (each run's records), every run judged at ``threshold``."""
    if len(runs) < 2:
        raise ValueError("agreement needs two runs or more")
    per_run = [gain_intervals(r) for r in runs]
    keys = list(dict.fromkeys(k for found in per_run for k in found))
    cells = tuple(GainCell(k, tuple(found.get(k) for found in per_run)) for k in keys)
    cells = tuple(c for c in cells if sum(x is not None for x in c.intervals) >= 2)
    classes = [_points(verdicts(r, threshold)) for r in runs]
    points = list(dict.fromkeys(p for found in classes for p in found))
    contradictions = []
    judged = 0
    for p in points:
        got = tuple(found.get(p) for found in classes)
        if sum(x is not None for x in got) >= 2:
            judged += 1
            if PAYS in got and NOT in got:
                contradictions.append(Contradiction(p[0], p[1], got))
    return Agreement(len(runs), cells, tuple(contradictions), judged, tuple(aa_check(r) for r in runs),
                     tuple(verdicts(pooled(runs), threshold)))
