"""The verdict on a farmed application (mpsbench-sweep --app): the best way to farm it, and where MPS pays off
across copies per GPU. The same rules as a kernel's over sizes (verdict.py, series.py), on one application
at one binding:

* the **best configuration**: among every mode and copies per GPU, the mode of the fastest configuration, at
  the fewest copies per GPU whose figure is within noise of it (rounds.fewest_within_noise); it is compared
  with one copy alone (timeslice at 1 copy, else its own mode at 1) and, with an interval, with timeslice at
  the same copies per GPU (where that interval reaches 1, the sentence says timeslice is within noise);
* across copies per GPU: the MPS gain mps / timeslice at each k with its interval, and series.where's
  sentence: where MPS pays off, where it does not, where the data cannot tell (outcome ``from``: MPS pays
  off from some count on, the crossover a range);
* a configuration none of whose rounds was usable is named in the same line with its first error, and no
  part of the sentence claims a count it has no result for;
* an application measured in its own unit (a program's own figure: ns/day, it/s) also says its runs per hour
  and the share of a run spent starting up (``app.runs_per_hour``, ``app.startup_share``).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Mapping

from .energy import energy_ratio, unit_word
from .intervals import Interval
from .records import Result, number
from .rounds import Config, configs, fastest_pairs, fewest_within_noise, gain_pairs, pool_of, ratio
from .series import Point, outcome, rounds_note, where
from .units import format_count, format_ratio


def _mode_name(label: str) -> str:
    return "MPS" if label == "mps" else label


def throughput_and_energy(mode: str, where_: str, gain: float, ratio_: float, unit: str) -> str:
    """'MPS at k=8 (size 4096): 1.80x the throughput at 0.60x the energy per TFLOP'."""
    return f"{_mode_name(mode)} at {where_}: {gain:.2f}x the throughput at {ratio_:.2f}x the energy per {unit}"


def _times(k: int) -> str:
    return f"{k} cop{'y' if k == 1 else 'ies'}"


def startup_share(r: Result) -> float | None:
    """The share of a run an application spends starting up: ``app.startup_share``, else the mean over its
    copies of ``startup_s.median / run_time_s.median``; None where neither is known."""
    app = r.raw.get("app") if isinstance(r.raw.get("app"), Mapping) else {}
    share = number(app.get("startup_share"))
    if share is not None:
        return share if 0 <= share <= 1 else None
    copies = r.raw.get("copies") if isinstance(r.raw.get("copies"), list) else []
    shares = []
    for c in copies:
        start, run = (c.get(k) if isinstance(c, Mapping) else None for k in ("startup_s", "run_time_s"))
        start, run = (number(x.get("median")) if isinstance(x, Mapping) else number(x) for x in (start, run))
        if start is not None and run and 0 <= start <= run:
            shares.append(start / run)
    return sum(shares) / len(shares) if shares else None


@dataclass(frozen=True)
class AppVerdict:
    """The best way to farm one application, and where MPS pays off across copies per GPU."""

    name: str
    threshold: float
    best: Config | None
    alone: float | None                  # one copy alone (timeslice at 1 copy, else the best mode at 1)
    timeslice: Interval | None           # best / timeslice at the best's copies per GPU (None: best is timeslice)
    points: tuple[Point, ...]            # mps against timeslice by ascending copies per GPU
    outcome: str                         # series.outcome
    between: tuple[int, int] | None      # the crossover range of "from" (or "below")
    failed: tuple[str, ...]              # configurations with no usable round: 'mps k=4 (exit status 1)'
    timeslice_energy: Any = None         # energy of timeslice at the best's copies per GPU (representative)
    params: str = ""

    @property
    def subject(self) -> str:
        return self.name + (f" ({self.params})" if self.params else "")

    @property
    def crossover(self) -> int | None:
        """The upper end of the crossover range: the first count from which MPS is known to pay off ("from"),
        or known not to ("below")."""
        return self.between[1] if self.between else None

    @property
    def below(self) -> int | None:
        return self.between[0] if self.between else None

    @staticmethod
    def rate(r: Result, figure: float | None = None) -> str:
        """The figure users of an application read: runs/hour for runs, else its own unit with runs/hour and
        the start-up share beside it. ``figure``: the configuration's figure over its rounds."""
        value = r.median if figure is None else figure
        if r.unit == "run/s":
            return format_count(value * 3600, "runs/hour")
        app = r.raw.get("app") if isinstance(r.raw.get("app"), Mapping) else {}
        runs = number(app.get("runs_per_hour"))
        share = startup_share(r)
        return (format_count(value, r.unit) + (f", {format_count(runs, 'runs/hour')}" if runs is not None else "")
                + (f", start-up {100 * share:.1f}% of a run" if share is not None else ""))

    def _energy(self) -> str:
        b = self.best.representative
        ratio_ = energy_ratio(b.energy, self.timeslice_energy) if self.timeslice is not None else None
        if ratio_ is None:
            return ""
        return "; " + throughput_and_energy(b.mode_label, f"{_times(b.ranks_per_gpu)} per GPU", self.timeslice.point,
                                            ratio_, unit_word(b.energy.unit))

    @property
    def sentence(self) -> str:
        failed = (f"; {len(self.failed)} configuration(s) failed: " + "; ".join(self.failed)) if self.failed else ""
        if self.best is None:
            return f"no configuration completed{failed}"
        b, figure = self.best.representative, self.best.figure
        gains = [f"{format_ratio(figure / self.alone)} one copy alone" if self.alone else "no one-copy run to compare"]
        if self.timeslice is not None:
            against = f"{self.timeslice.point:.2f}x [{self.timeslice.text}] timeslice at {b.ranks_per_gpu} per GPU"
            gains.append(against + (": within noise of it" if self.timeslice.contains(1.0) else ""))
        series = ""
        if self.points:
            series = "; " + where(self.points, self.threshold, "copies") + "; MPS gain [95% interval] by copies " \
                "per GPU: " + ", ".join(f"{p.at} {p.gain_text}" for p in self.points) + rounds_note(self.points)
        return (f"best {b.mode_label} at {_times(b.ranks_per_gpu)} per GPU, {self.rate(b, figure)} ({'; '.join(gains)})"
                + self._energy() + series + failed)

    @property
    def line(self) -> str:
        return f"verdict: {self.subject}: {self.sentence}"


def _failure(c: Config) -> str:
    first = c.first
    why = next((r.error for r in c.records if r.error), None) or ("check failed" if first.status == "ok" else
                                                                    first.status)
    return f"{first.mode_label} k={first.ranks_per_gpu} ({why})"


def app_verdict(mine: list[Result], threshold: float) -> AppVerdict:
    found = configs(mine)
    usable = [c for c in found if c.figure is not None]
    failed = tuple(_failure(c) for c in found if c.figure is None)
    name, params = mine[0].name, mine[0].params
    if not usable:
        return AppVerdict(name, threshold, None, None, None, (), "none", None, failed, params=params)
    by_mode: dict[str, list[Config]] = {}
    for c in sorted(usable, key=lambda c: c.first.ranks_per_gpu):
        by_mode.setdefault(c.first.mode_label, []).append(c)
    rank_pool = pool_of(p for cs in by_mode.values() for p in fastest_pairs(cs))
    fastest = max(usable, key=lambda c: c.figure)
    best = fewest_within_noise(by_mode[fastest.first.mode_label], rank_pool)

    def at(mode: str, k: int) -> Config | None:
        return next((c for c in by_mode.get(mode, []) if c.first.ranks_per_gpu == k), None)

    k_best = best.first.ranks_per_gpu
    alone = at("timeslice", 1) or at(best.first.mode_label, 1)
    ks = sorted({c.first.ranks_per_gpu for c in by_mode.get("mps", [])}
                & {c.first.ranks_per_gpu for c in by_mode.get("timeslice", [])})
    gain_pool = pool_of(gain_pairs(usable))
    points = tuple(Point(k, k, at("mps", k).figure, at("timeslice", k).figure, ratio(at("mps", k), at("timeslice", k),
                                                                                    gain_pool),
                         at("mps", k).representative.energy, at("timeslice", k).representative.energy) for k in ks)
    timeslice = at("timeslice", k_best)
    against = None
    if timeslice is not None and best.first.mode_label != "timeslice":
        pool = gain_pool if best.first.mode_label == "mps" else None
        against = ratio(best, timeslice, pool)
    found_outcome = outcome(points, threshold)
    return AppVerdict(name, threshold, best, alone.figure if alone else None, against, points, found_outcome.kind,
                      found_outcome.between, failed,
                      timeslice.representative.energy if timeslice else None, params)
