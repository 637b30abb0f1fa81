"""Where MPS pays off along a series of points (sizes of a kernel, copies per GPU of an application), from
intervals: the rule every verdict uses.

At each point the MPS gain mps / timeslice has a 95 % interval (intervals.py). Against the threshold T:

* **pays off** where the whole interval lies above T;
* **does not** where it lies below T;
* **cannot tell** otherwise (the interval is given: "1.02x-1.16x"), and where the gain of each mode's fastest
  ranks per GPU pays off and the gain of its best (the fewest within noise of the fastest) does not, or the
  other way round: then the data cannot tell which ranks per GPU are best, and the range spans both.

Over the series (ascending), the outcome is:

* ``every`` / ``never`` / ``unclear``: every point pays off / does not / cannot tell;
* ``below``: some points pay off, some do not, and every one that pays off lies below every one that does
  not (kernels: small sizes gain). The crossover is a range: between the last point that pays off and the
  first that does not; points in between cannot tell;
* ``from``: the same the other way round (applications: MPS pays off from some copies per GPU on);
* ``mixed``: anything else (points that pay off and points that do not alternate, or some points
  cannot tell and none does not pay off, or none pays off): the sentence lists where each holds;
* ``none``: no point.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Sequence

from .energy import energy_ratio, unit_word
from .intervals import Interval

PAYS, NOT, CANNOT = "pays off", "does not", "cannot tell"
_SIDE = {"above": PAYS, "below": NOT, "straddles": CANNOT}


@dataclass(frozen=True)
class Point:
    """One step of a series: at ``at`` (a size, or copies per GPU), k ranks per GPU, both figures (the
    configurations' figures over their rounds, rounds.py) and the gain's interval."""

    at: int
    k: int
    mps: float
    timeslice: float
    interval: Interval | None = None
    mps_energy: Any = None          # energy.Energy of each side's representative round, where measured
    timeslice_energy: Any = None
    k_timeslice: int | None = None  # timeslice's ranks per GPU where it differs from k's meaning (kernels: its best)
    # the gain of each mode's fastest ranks per GPU (mps k, timeslice k), where it pays off and the best's does
    # not or the other way round: the data cannot tell which ranks per GPU are best, so neither answer stands
    fastest: Interval | None = None
    k_fastest: tuple[int, int] | None = None

    @property
    def against(self) -> str:
        """' vs timeslice k=1' where timeslice was taken at other ranks per GPU than mps, else ''."""
        return f" vs timeslice k={self.k_timeslice}" if self.k_timeslice not in (None, self.k) else ""

    @property
    def gain(self) -> float:
        return self.interval.point if self.interval is not None else self.mps / self.timeslice

    def verdict(self, threshold: float) -> str:
        """PAYS, NOT or CANNOT (module doc); a point without an interval is judged on its gain alone; CANNOT
        where the fastest ranks per GPU's gain lands on another side of the threshold."""
        if self.interval is None:
            return PAYS if self.gain > threshold else NOT if self.gain < threshold else CANNOT
        own = _SIDE[self.interval.side(threshold)]
        if self.fastest is not None and _SIDE[self.fastest.side(threshold)] != own:
            return CANNOT
        return own

    @property
    def range_text(self) -> str:
        """The range a "cannot tell" gives: the interval, or from the lower to the higher end of the best's and
        the fastest's intervals where both stand."""
        if self.fastest is None:
            return self.interval.text
        low, high = min(self.interval.low, self.fastest.low), max(self.interval.high, self.fastest.high)
        return f"{low:.2f}x-{high:.2f}x"

    @property
    def gain_text(self) -> str:
        """'1.79x [1.70x-1.88x]' (the gain alone without an interval); where the fastest ranks per GPU tell
        another story, theirs too: '1.00x [0.92x-1.06x] (the fastest, k=2 vs timeslice k=2: 1.33x [1.25x-1.41x])'."""
        text = f"{self.gain:.2f}x" + (f" [{self.interval.text}]" if self.interval is not None else "")
        if self.fastest is not None and self.k_fastest is not None:
            m, t = self.k_fastest
            text += f" (the fastest, k={m} vs timeslice k={t}: {self.fastest.point:.2f}x [{self.fastest.text}])"
        return text

    @property
    def energy_ratio(self) -> float | None:
        return energy_ratio(self.mps_energy, self.timeslice_energy)

    @property
    def energy_unit(self) -> str:
        return unit_word(self.mps_energy.unit) if self.energy_ratio is not None else ""


@dataclass(frozen=True)
class Outcome:
    """The series' outcome (module doc) and, for ``below`` and ``from``, the crossover range."""

    kind: str
    between: tuple[int, int] | None = None    # (last that pays off, first that does not) or the reverse

    @property
    def adjacent(self) -> bool:
        return self.between is not None


def outcome(points: Sequence[Point], threshold: float) -> Outcome:
    if not points:
        return Outcome("none")
    verdicts = [p.verdict(threshold) for p in points]
    pays = [p.at for p, v in zip(points, verdicts) if v == PAYS]
    nots = [p.at for p, v in zip(points, verdicts) if v == NOT]
    if len(pays) == len(points):
        return Outcome("every")
    if len(nots) == len(points):
        return Outcome("never")
    if not pays and not nots:
        return Outcome("unclear")
    if pays and nots and max(pays) < min(nots):
        return Outcome("below", (max(pays), min(nots)))
    if pays and nots and max(nots) < min(pays):
        return Outcome("from", (max(nots), min(pays)))
    return Outcome("mixed")


def _join(items: Sequence[str]) -> str:
    return items[0] if len(items) == 1 else ", ".join(items[:-1]) + " and " + items[-1]


def where(points: Sequence[Point], threshold: float, axis: str, subject: str = "MPS") -> str:
    """The sentence part that says where ``subject`` pays off, where not, where the data cannot tell:
    'MPS pays off at 512 and 1024 (gain above 1.1x); does not at 8192; cannot tell at 2048 (0.97x-1.21x);
    the crossover lies between 1024 and 8192'. ``axis``: "size" or "copies"."""
    t = f"{threshold:g}x"
    found = outcome(points, threshold)

    def unit(items: Sequence[str]) -> str:
        return "" if axis == "size" else " copy per GPU" if items == ["1"] else " copies per GPU"

    if found.kind == "every":
        span = f"{points[0].at}" + (f" to {points[-1].at}" if len(points) > 1 else "")
        return (f"{subject} pays off at every {'size' if axis == 'size' else 'count'} measured ({span}"
                f"{'' if axis == 'size' else ' copies per GPU'}; "
                f"gain above {t} throughout)")
    if found.kind == "never":
        return f"{subject} does not pay off at any {'size' if axis == 'size' else 'count'} measured (gain below {t})"
    parts = []
    pays = [str(p.at) for p in points if p.verdict(threshold) == PAYS]
    nots = [str(p.at) for p in points if p.verdict(threshold) == NOT]
    cannot = [f"{p.at} ({p.range_text})" for p in points if p.verdict(threshold) == CANNOT and p.interval]
    cannot += [str(p.at) for p in points if p.verdict(threshold) == CANNOT and not p.interval]
    if pays:
        parts.append(f"{subject} pays off at {_join(pays)}{unit(pays)} (gain above {t})")
    if nots:
        parts.append(("does not" if pays else f"{subject} does not pay off") + f" at {_join(nots)}{unit(nots)}"
                     + ("" if pays else f" (gain below {t})"))
    if cannot:
        parts.append(("cannot tell" if parts else f"the data cannot tell whether {subject} pays off")
                     + f" at {_join(cannot)}" + ("" if parts else f" (gain against {t})"))
    if found.kind in ("below", "from"):
        a, b = found.between
        parts.append(f"the crossover lies between {a} and {b}{unit([str(a), str(b)])}")
    return "; ".join(parts)


def rounds_note(points: Sequence[Point]) -> str:
    """'; one round: the spread between processes was not measured' where some interval stands on one round."""
    if any(p.interval is not None and p.interval.basis == "one round" for p in points):
        return "; one round: the spread between processes was not measured (mpsbench-sweep --rounds 2 or more)"
    return ""
