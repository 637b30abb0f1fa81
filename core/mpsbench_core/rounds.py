"""One figure per configuration from its rounds: what the verdicts, tables and gates read.

mpsbench-sweep --rounds R measures every configuration R times, each round in its own processes; each
record says its ``round`` (files without one: round 0). A configuration is its subject (records.Result.subject:
kind, name, precision, params), size, ranks (copies) per GPU and mode label; its **figure** is the geometric
mean of the medians of its usable rounds (so that a ratio of two figures is exp(mean of the per-round log
ratios), intervals.py), and it is usable when at least one round is. Rounds that failed or did not verify
are left out of the figure and counted (a configuration with any such round is not "verified").

Ratios between configurations are paired by round (:func:`paired`): the modes of one round ran next to each
other in time, so drift of the machine falls on both sides of a ratio alike; where two records of a round took
turns (turn_pairs.py), by repetition within the round too. The round-to-round spread of a kind of ratio is
pooled over a subject's configurations (:func:`pool_of`) for the moderated interval.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace
from typing import Iterable, Sequence

from . import turn_pairs
from .intervals import Interval, Pool, ratio_interval, within_se
from .records import Result, number


def round_of(r: Result) -> int:
    """The record's round; 0 for records without one (a single run, an older file)."""
    value = r.raw.get("round") if hasattr(r.raw, "get") else None
    return value if isinstance(value, int) and not isinstance(value, bool) and value >= 0 else 0


def _noise(r: Result) -> float | None:
    """The record's within-process relative noise of its median (noise.relative), None where absent."""
    noise = r.raw.get("noise") if hasattr(r.raw, "get") else None
    return number(noise.get("relative")) if isinstance(noise, dict) else None


Key = tuple  # (kind, name, precision, params, size, ranks_per_gpu, mode_label)


def key_of(r: Result) -> Key:
    return (*r.subject, r.size, r.ranks_per_gpu, r.mode_label)


@dataclass(frozen=True)
class Config:
    """One configuration over its rounds."""

    key: Key
    records: tuple[Result, ...]          # every round's record, in round order (one per round)

    @property
    def usable(self) -> tuple[Result, ...]:
        return tuple(r for r in self.records if r.usable)

    @property
    def first(self) -> Result:
        return self.records[0]

    @property
    def rounds(self) -> tuple[int, ...]:
        return tuple(round_of(r) for r in self.records)

    @property
    def left_out(self) -> int:
        """Rounds that failed or did not verify."""
        return len(self.records) - len(self.usable)

    @property
    def figure(self) -> float | None:
        """The geometric mean of the usable rounds' medians; None when no round is usable."""
        values = [r.median for r in self.usable]
        if len(values) <= 1:
            return values[0] if values else None  # exactly the round's median, not exp(log(x))
        return math.exp(math.fsum(map(math.log, values)) / len(values))

    def by_round(self) -> dict[int, float]:
        return {round_of(r): r.median for r in self.usable}

    @property
    def noise(self) -> float:
        """The within-process relative noise of the figure: the rounds' noises' root mean square over
        sqrt(rounds) (0 where unknown)."""
        values = [n for n in (_noise(r) for r in self.usable) if n is not None]
        if not values:
            return 0.0
        return math.sqrt(math.fsum(v * v for v in values) / len(values)) / math.sqrt(len(self.usable))

    @property
    def representative(self) -> Result:
        """The round whose median is nearest the figure (the first on a tie); the first record when none
        is usable: where a table shows one round's details (energy, ranks), it shows this one's."""
        figure = self.figure
        if figure is None:
            return self.first
        # rounded: with two rounds both are equally near their geometric mean, and float error must not choose
        return min(self.usable, key=lambda r: round(abs(math.log(r.median / figure)), 9))

    @property
    def verified(self) -> bool:
        return bool(self.records) and all(r.verified for r in self.records)


def configs(results: Iterable[Result]) -> list[Config]:
    """The configurations of the records, in the order they first appear; within one, records in round order
    (a second record of the same round is left out: a file holds one per round)."""
    found: dict[Key, dict[int, Result]] = {}
    for r in results:
        found.setdefault(key_of(r), {}).setdefault(round_of(r), r)
    return [Config(k, tuple(v[i] for i in sorted(v))) for k, v in found.items()]


def _common(a: Config, b: Config) -> list[tuple[Result, Result, bool]]:
    """(a's record, b's record, whether they pair by repetition) of every round where both were usable,
    in round order."""
    ra, rb = ({round_of(r): r for r in c.usable} for c in (a, b))
    return [(ra[i], rb[i], turn_pairs.aligned(ra[i], rb[i])) for i in sorted(set(ra) & set(rb))]


def by_repetition(a: Config, b: Config) -> bool:
    """Whether every round of a / b is paired by repetition (turn_pairs.aligned)."""
    common = _common(a, b)
    return bool(common) and all(aligned for _, _, aligned in common)


def paired(a: Config, b: Config) -> list[float]:
    """log(a / b) per round where both were usable, in round order: where the two took turns, the median
    of the per-repetition log ratios (turn_pairs.py); else the log ratio of the rounds' medians."""
    return [turn_pairs.log_ratio(x, y) if aligned else math.log(x.median / y.median)
            for x, y, aligned in _common(a, b)]


def within(a: Config, b: Config) -> float:
    """The floor of log(a / b)'s standard error from the repetitions inside the rounds: where every round
    is paired by repetition, the root mean square of the rounds' paired noises (turn_pairs.noise) over
    sqrt(rounds); else the two sides' own noises combined (intervals.within_se)."""
    noises = [turn_pairs.noise(x, y) if aligned else None for x, y, aligned in _common(a, b)]
    if noises and all(n is not None for n in noises):
        return math.sqrt(math.fsum(n * n for n in noises) / len(noises)) / math.sqrt(len(noises))
    return within_se([a.noise, b.noise])


def pool_of(pairs: Iterable[tuple[Config, Config]]) -> Pool | None:
    """The pooled round-to-round variance of log(a / b) over the pairs (intervals.Pool.of)."""
    return Pool.of(paired(a, b) for a, b in pairs)


def ratio(a: Config, b: Config, pool: Pool | None) -> Interval | None:
    """a / b with its interval, paired by round; None when no round has both."""
    d = paired(a, b)
    if not d:
        return None
    return ratio_interval(d, pool, within(a, b), "repetition" if by_repetition(a, b) else "round")


@dataclass(frozen=True)
class Rounds:
    """How many rounds a set of records holds: the most any configuration has, and whether they differ."""

    most: int
    fewest: int

    @classmethod
    def of(cls, found: Sequence[Config]) -> "Rounds":
        counts = [len(c.records) for c in found] or [0]
        return cls(max(counts), min(counts))

    @property
    def text(self) -> str:
        if self.most <= 1:
            return "one round"
        return f"{self.most} rounds" if self.most == self.fewest else f"{self.fewest}-{self.most} rounds"


def fastest(candidates: Sequence[Config]) -> Config:
    """The candidate with the highest figure (the first on a tie)."""
    return max(candidates, key=lambda c: c.figure)


def fastest_pairs(candidates: Sequence[Config]) -> list[tuple[Config, Config]]:
    """(candidate, the fastest candidate) for every other candidate: the ratios whose round-to-round spread
    is pooled for the "within noise of the fastest" rule."""
    top = fastest(candidates)
    return [(c, top) for c in candidates if c is not top]


def fewest_within_noise(candidates: Sequence[Config], pool) -> Config:
    """The fewest ranks (copies) per GPU among ``candidates`` (one mode, ascending k) whose figure is within
    noise of the fastest's: the interval of its figure over the fastest's reaches 1."""
    top = fastest(candidates)
    for c in candidates:
        if c is top:
            return c
        interval = ratio(c, top, pool)
        if interval is not None and interval.high >= 1.0:
            return c
    return top


def gain_pairs(found: Iterable[Config], mode: str = "mps") -> list[tuple[Config, Config]]:
    """(``mode``, timeslice) at every size and ranks per GPU of one subject where both have a figure: the
    MPS gains whose round-to-round spread is pooled for every gain interval of the subject (the verdict's
    and the A/A row's alike)."""
    at = {(c.first.mode_label, c.first.size, c.first.ranks_per_gpu): c for c in found if c.figure is not None}
    return [(c, at[("timeslice", s, k)]) for (m, s, k), c in at.items() if m == mode and ("timeslice", s, k) in at]


def combined(found: Iterable[Config]) -> list[Result]:
    """One record per configuration, for tables that show one figure per configuration: its representative
    round's record with the median replaced by the figure, and verified only when every round verified (a
    configuration none of whose rounds is usable: its first record as it is)."""
    out = []
    for c in found:
        figure = c.figure
        if figure is None:
            out.append(c.first)
        else:
            out.append(replace(c.representative, median=figure, verified=c.verified))
    return out


def gain_intervals(results: Iterable[Result], mode: str = "mps") -> dict[tuple, Interval]:
    """{(subject, size, ranks per GPU): the ``mode`` / timeslice gain's interval} for every configuration measured
    in both, each subject's gains pooled together (gain_pairs): the intervals the verdict, the sweep's table,
    the A/A row and the agreement of several runs all show."""
    by_subject: dict[tuple, list[Config]] = {}
    for c in configs(results):
        by_subject.setdefault(c.first.subject, []).append(c)
    out = {}
    for found in by_subject.values():
        pairs = gain_pairs(found, mode)
        pool = pool_of(pairs)
        for m, t in pairs:
            interval = ratio(m, t, pool)
            if interval is not None:
                out[(m.first.subject, m.first.size, m.first.ranks_per_gpu)] = interval
    return out
