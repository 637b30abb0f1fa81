"""The one answer to "does MPS help, and with how many processes per GPU?": the verdict of a results file.

The sweep prints these lines at the end of a run, `mpsbench-analyze verdict FILE` prints the same
lines from the file, and the report says the same sentences: all three call this module.

Definitions (the MPS gain pays off at ``threshold``, GAIN_THRESHOLD unless the run said otherwise):

* A result counts when it was measured (status ok), verified and has a positive median of its
  primary metric; others are left out and counted.
* Kernels (per kernel, precision and parameters). At each size S, k(S) is the number of ranks per GPU
  with the highest mps median among the k measured in both mps and timeslice at S (the smaller k on a
  tie): the configuration a user would run. The MPS gain at S is mps / timeslice at k(S). The
  crossover is the smallest measured size S with gain < threshold at every measured size >= S:
    - "every": no size falls short;
    - "largest": some smaller size falls short but the largest pays off (no crossover);
    - "never": the crossover is the smallest size;
    - "below": MPS pays off below the crossover size.
* Applications (per name). The best configuration is the verified one with the highest median in any
  mode and copies per GPU; it is compared with one copy alone (timeslice at 1 copy, else its own mode
  at 1) and with timeslice at the same copies per GPU. Across copies per GPU, the gain at k is
  mps / timeslice at k; MPS pays off from the smallest k with gain >= threshold at every measured
  k' >= k ("from"; "every" when that is the smallest k; "never" when no k pays off; "largest" when
  some k pays off but the largest does not).
* Mixes are judged per tenant (mix.py): their verdicts come after the applications'.
* The energy side, where both records of a comparison carry an energy per unit of work (energy.py): a kernel
  at each size's k(S), mps against timeslice at k(S); an application's best configuration against timeslice
  at its copies per GPU: "MPS at k=8 (size 4096): 1.80x the throughput at 0.60x the energy per TFLOP".
* An application measured in its own unit (a program's own figure: ns/day, it/s) also says its runs per hour
  and the share of a run spent starting up (``app.runs_per_hour``, ``app.startup_share``).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Iterable, Mapping, Sequence

from . import modes
from .energy import energy_ratio, unit_word
from .mix import MixVerdict, mix_verdict
from .records import Result, number
from .units import format_count, format_ratio

#: The MPS gain over time slicing that "pays off".
GAIN_THRESHOLD = 1.1


def size_crossover(sizes: Sequence[int], gains: Sequence[float], threshold: float) -> tuple[int | None, str]:
    """(crossover size, outcome) for gains at ascending sizes; outcomes as in the module's docstring."""
    if not sizes:
        raise ValueError("no sizes")
    start = None
    for size, gain in zip(reversed(sizes), reversed(gains)):
        if gain >= threshold:
            break
        start = size
    if start is None:
        return None, "every" if all(g >= threshold for g in gains) else "largest"
    return start, "never" if start == sizes[0] else "below"


def copies_crossover(ks: Sequence[int], gains: Sequence[float],
                     threshold: float) -> tuple[int | None, int | None, str]:
    """(k from which MPS pays off at every larger k, the largest k still below, outcome) for gains at
    ascending copies per GPU; outcomes as in the module's docstring."""
    if not ks:
        raise ValueError("no copies per GPU")
    start = None
    for k, gain in zip(reversed(ks), reversed(gains)):
        if gain < threshold:
            break
        start = k
    if start is None:
        return None, ks[-1], "never" if all(g < threshold for g in gains) else "largest"
    if start == ks[0]:
        return start, None, "every"
    return start, ks[ks.index(start) - 1], "from"


@dataclass(frozen=True)
class Point:
    """One step of a verdict's series: at ``at`` (a size, or copies per GPU), k ranks per GPU, both medians."""

    at: int
    k: int
    mps: float
    timeslice: float
    mps_energy: Any = None          # energy.Energy of each side, where the records carry one
    timeslice_energy: Any = None

    @property
    def gain(self) -> float:
        return self.mps / self.timeslice

    @property
    def energy_ratio(self) -> float | None:
        """mps / timeslice energy per unit of work; None unless both sides have one."""
        return energy_ratio(self.mps_energy, self.timeslice_energy)

    @property
    def energy_unit(self) -> str:
        return unit_word(self.mps_energy.unit) if self.energy_ratio is not None else ""


def _mode_name(label: str) -> str:
    return "MPS" if label == "mps" else label


def throughput_and_energy(mode: str, where: str, gain: float, ratio: float, unit: str) -> str:
    """'MPS at k=8 (size 4096): 1.80x the throughput at 0.60x the energy per TFLOP'."""
    return f"{_mode_name(mode)} at {where}: {gain:.2f}x the throughput at {ratio:.2f}x the energy per {unit}"


def _times(k: int) -> str:
    return f"{k} cop{'y' if k == 1 else 'ies'}"


@dataclass(frozen=True)
class KernelVerdict:
    """Where MPS pays off for one kernel, precision and parameters."""

    kernel: str
    precision: str
    params: str
    threshold: float
    points: tuple[Point, ...]       # by ascending size
    crossover: int | None
    outcome: str                    # every, largest, never, below; "none" when there is no verdict
    left_out: int                   # failed or unverified mps/timeslice results
    why: str = ""                   # why there is no verdict (outcome "none")

    @property
    def subject(self) -> str:
        return f"{self.kernel} {self.precision}" + (f" ({self.params})" if self.params else "")

    @property
    def sentence(self) -> str:
        if self.outcome == "none":
            return self.why
        t = f"{self.threshold:g}x"
        first, last = self.points[0].at, self.points[-1].at
        if self.outcome == "every":
            where = f"MPS pays off at every size measured ({first}" + (f" to {last})" if len(self.points) > 1 else ")")
        elif self.outcome == "never":
            where = f"MPS never pays off (gain < {t} at every size measured)"
        elif self.outcome == "below":
            where = f"MPS pays off below size {self.crossover} (gain < {t} from {self.crossover} on)"
        else:
            short = ", ".join(str(p.at) for p in self.points if p.gain < self.threshold)
            where = f"MPS pays off at the largest size measured (gain < {t} only at {short})"
        by_size = ", ".join(f"{p.at} k={p.k} {p.gain:.2f}x" for p in self.points)
        return f"{where}; best ranks/GPU and MPS gain by size: {by_size}{self._energy()}{self._left_out()}"

    def _energy(self) -> str:
        """The energy side: at the size of the largest gain with energy on both sides, and by size where
        more than one size has it."""
        metered = [p for p in self.points if p.energy_ratio is not None]
        if not metered:
            return ""
        top = max(metered, key=lambda p: p.gain)
        out = "; " + throughput_and_energy("mps", f"k={top.k} (size {top.at})", top.gain, top.energy_ratio,
                                           top.energy_unit)
        if len(metered) > 1:
            out += (f"; energy per {top.energy_unit} mps/timeslice by size: "
                    + ", ".join(f"{p.at} {p.energy_ratio:.2f}x" for p in metered))
        return out

    def _left_out(self) -> str:
        return f"; {self.left_out} configuration(s) failed or unverified, left out" if self.left_out else ""

    @property
    def line(self) -> str:
        return f"verdict: {self.subject}: {self.sentence}"


@dataclass(frozen=True)
class AppVerdict:
    """The best way to farm one application, and where MPS pays off across copies per GPU."""

    name: str
    threshold: float
    best: Result | None
    alone: float | None             # one copy alone (timeslice at 1 copy, else the best mode at 1)
    timeslice: float | None         # timeslice at the best configuration's copies per GPU
    points: tuple[Point, ...]       # mps against timeslice by ascending copies per GPU
    crossover: int | None
    below: int | None
    outcome: str                    # every, from, never, largest; "none" without mps and timeslice at one k
    failed: int                     # configurations not usable (failed, check failed)
    timeslice_energy: Any = None    # energy.Energy of timeslice at the best configuration's copies per GPU
    params: str = ""                # the application's binding (records.app_params)

    @property
    def subject(self) -> str:
        return self.name + (f" ({self.params})" if self.params else "")

    @staticmethod
    def rate(r: Result) -> str:
        """The figure users of an application read: runs/hour for runs, else its own unit with runs/hour and
        the start-up share beside it."""
        if r.unit == "run/s":
            return format_count(r.median * 3600, "runs/hour")
        app = r.raw.get("app") if isinstance(r.raw.get("app"), Mapping) else {}
        runs = number(app.get("runs_per_hour"))
        share = startup_share(r)
        return (format_count(r.median, r.unit) + (f", {format_count(runs, 'runs/hour')}" if runs is not None else "")
                + (f", start-up {100 * share:.1f}% of a run" if share is not None else ""))

    def _energy(self) -> str:
        b = self.best
        ratio = energy_ratio(b.energy, self.timeslice_energy) if b.mode != "timeslice" and self.timeslice else None
        if ratio is None:
            return ""
        return "; " + throughput_and_energy(b.mode_label, f"{_times(b.ranks_per_gpu)} per GPU", b.median / self.timeslice,
                                            ratio, unit_word(b.energy.unit))

    @property
    def sentence(self) -> str:
        failed = f"; {self.failed} configuration(s) failed" if self.failed else ""
        if self.best is None:
            return f"no configuration completed ({self.failed} failed)"
        b = self.best
        gains = [f"{format_ratio(b.median / self.alone)} one copy alone" if self.alone else
                 "no one-copy run to compare"]
        if self.timeslice and b.mode != "timeslice":
            gains.append(f"{format_ratio(b.median / self.timeslice)} timeslice at {b.ranks_per_gpu} per GPU")
        return (f"best {b.mode_label} at {_times(b.ranks_per_gpu)} per GPU, {self.rate(b)} ({'; '.join(gains)})"
                + self._energy() + self._crossover() + failed)

    def _crossover(self) -> str:
        t = f"{self.threshold:g}x"
        if self.outcome == "every":
            return f"; MPS pays off at every copies-per-GPU count measured (gain >= {t})"
        if self.outcome == "from":
            return f"; MPS pays off from {_times(self.crossover)} per GPU on (gain < {t} at {self.below})"
        if self.outcome == "never":
            return f"; MPS never pays off (gain < {t} at every count measured)"
        if self.outcome == "largest":
            return f"; MPS does not pay off at the largest count measured, {self.points[-1].at} (gain < {t})"
        return ""

    @property
    def line(self) -> str:
        return f"verdict: {self.subject}: {self.sentence}"


def _kernel_verdict(mine: list[Result], threshold: float) -> KernelVerdict:
    kernel, precision, params = mine[0].name, mine[0].precision, mine[0].params
    measured = sorted({r.mode for r in mine}, key=modes.sort_key)
    missing = [m for m in ("timeslice", "mps") if m not in measured]
    if missing:
        why = f"no MPS verdict: {' and '.join(missing)} not measured (measured: {', '.join(measured) or 'nothing'})"
        return KernelVerdict(kernel, precision, params, threshold, (), None, "none", 0, why)
    compared = [r for r in mine if r.mode in ("timeslice", "mps")]
    left_out = sum(not r.usable for r in compared)
    found = {(r.mode, r.size, r.ranks_per_gpu): r for r in compared if r.usable}
    best: dict[int, tuple[Result, Result]] = {}  # size -> (mps, timeslice) at k(S)
    for (mode, size, k), r in sorted(found.items(), key=lambda item: item[0][2]):
        timeslice = found.get(("timeslice", size, k))
        if mode != "mps" or timeslice is None:
            continue
        if size not in best or r.median > best[size][0].median:
            best[size] = (r, timeslice)
    if not best:
        why = "no MPS verdict: no size has verified mps and timeslice results at the same ranks per GPU" + (
            f"; {left_out} configuration(s) failed or unverified, left out" if left_out else "")
        return KernelVerdict(kernel, precision, params, threshold, (), None, "none", left_out, why)
    points = tuple(Point(s, m.ranks_per_gpu, m.median, t.median, m.energy, t.energy)
                   for s, (m, t) in sorted(best.items()))
    crossover, outcome = size_crossover([p.at for p in points], [p.gain for p in points], threshold)
    return KernelVerdict(kernel, precision, params, threshold, points, crossover, outcome, left_out)


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


def _app_verdict(mine: list[Result], threshold: float) -> AppVerdict:
    ok = [r for r in mine if r.usable]
    failed = len(mine) - len(ok)
    name, params = mine[0].name, mine[0].params
    if not ok:
        return AppVerdict(name, threshold, None, None, None, (), None, None, "none", failed, params=params)
    best = max(ok, key=lambda r: (r.median, -r.ranks_per_gpu))

    def record(mode: str, k: int) -> Result | None:
        return next((r for r in ok if r.mode_label == mode and r.ranks_per_gpu == k), None)

    def at(mode: str, k: int) -> float | None:
        r = record(mode, k)
        return r.median if r is not None else None

    alone = at("timeslice", 1) or at(best.mode_label, 1)
    timeslice = record("timeslice", best.ranks_per_gpu)
    ks = sorted({r.ranks_per_gpu for r in ok if r.mode_label == "mps"} &
                {r.ranks_per_gpu for r in ok if r.mode_label == "timeslice"})
    points = tuple(Point(k, k, record("mps", k).median, record("timeslice", k).median, record("mps", k).energy,
                         record("timeslice", k).energy) for k in ks)
    crossover = below = None
    outcome = "none"
    if points:
        crossover, below, outcome = copies_crossover(list(ks), [p.gain for p in points], threshold)
    return AppVerdict(name, threshold, best, alone, timeslice.median if timeslice else None, points, crossover, below,
                      outcome, failed, timeslice.energy if timeslice else None, params)


Verdict = KernelVerdict | AppVerdict | MixVerdict


def verdicts(results: Iterable[Result], threshold: float | None = None) -> list[Verdict]:
    """One verdict per kernel (precision, parameters), per application (binding) and per mix, in the order
    they first appear."""
    threshold = GAIN_THRESHOLD if threshold is None else threshold
    groups: dict[tuple[str, str, str, str], list[Result]] = {}
    for r in results:
        groups.setdefault(r.subject, []).append(r)
    judge = {"app": lambda mine: _app_verdict(mine, threshold), "mix": mix_verdict}
    return [judge.get(key[0], lambda mine: _kernel_verdict(mine, threshold))(mine) for key, mine in groups.items()]


def verdict_items(found: Sequence[Verdict]) -> list[tuple[str, str, list[Verdict]]]:
    """(subject, sentence, the verdicts it stands for) in the order the lines go: kernels, applications, mixes;
    where every kernel lacks the same mode (the CPU device runs streams only), one item says it for all."""
    kernels = [v for v in found if isinstance(v, KernelVerdict)]
    whys = {v.why for v in kernels}
    if len(kernels) > 1 and len(whys) == 1 and all(v.outcome == "none" and " not measured " in v.why
                                                   for v in kernels):
        items = [("every kernel", whys.pop(), list(kernels))]
    else:
        items = [(v.subject, v.sentence, [v]) for v in kernels]
    for kind in (AppVerdict, MixVerdict):
        items += [(v.subject, v.sentence, [v]) for v in found if isinstance(v, kind)]
    return items


def verdict_lines(found: Sequence[Verdict]) -> list[str]:
    """The verdict lines as the sweep prints them (:func:`verdict_items`), one per item."""
    return [f"verdict: {subject}: {sentence}" for subject, sentence, _ in verdict_items(found)]
