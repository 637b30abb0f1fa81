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
* Mixes are judged per tenant (mix.py), not here.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Iterable, Sequence

from . import modes
from .records import Result
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

    @property
    def gain(self) -> float:
        return self.mps / self.timeslice


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
        return f"{where}; best ranks/GPU and MPS gain by size: {by_size}{self._left_out()}"

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

    @property
    def subject(self) -> str:
        return self.name

    @staticmethod
    def rate(r: Result) -> str:
        """The figure users of an application read: runs/hour for runs, else its own unit."""
        if r.unit == "run/s":
            return format_count(r.median * 3600, "runs/hour")
        return format_count(r.median, r.unit)

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
                + self._crossover() + failed)

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
    value = {(r.mode, r.size, r.ranks_per_gpu): r.median for r in compared if r.usable}
    best: dict[int, tuple[int, float, float]] = {}  # size -> (k, mps, timeslice)
    for (mode, size, k), mps in sorted(value.items(), key=lambda item: item[0][2]):
        timeslice = value.get(("timeslice", size, k))
        if mode != "mps" or timeslice is None:
            continue
        if size not in best or mps > best[size][1]:
            best[size] = (k, mps, timeslice)
    if not best:
        why = "no MPS verdict: no size has verified mps and timeslice results at the same ranks per GPU" + (
            f"; {left_out} configuration(s) failed or unverified, left out" if left_out else "")
        return KernelVerdict(kernel, precision, params, threshold, (), None, "none", left_out, why)
    points = tuple(Point(s, *best[s]) for s in sorted(best))
    crossover, outcome = size_crossover([p.at for p in points], [p.gain for p in points], threshold)
    return KernelVerdict(kernel, precision, params, threshold, points, crossover, outcome, left_out)


def _app_verdict(mine: list[Result], threshold: float) -> AppVerdict:
    ok = [r for r in mine if r.usable]
    failed = len(mine) - len(ok)
    name = mine[0].name + (f" ({mine[0].params})" if mine[0].params else "")  # its binding, if pinned
    if not ok:
        return AppVerdict(name, threshold, None, None, None, (), None, None, "none", failed)
    best = max(ok, key=lambda r: (r.median, -r.ranks_per_gpu))

    def at(mode: str, k: int) -> float | None:
        return next((r.median for r in ok if r.mode_label == mode and r.ranks_per_gpu == k), None)

    alone = at("timeslice", 1) or at(best.mode_label, 1)
    timeslice = at("timeslice", best.ranks_per_gpu)
    ks = sorted({r.ranks_per_gpu for r in ok if r.mode_label == "mps"} &
                {r.ranks_per_gpu for r in ok if r.mode_label == "timeslice"})
    points = tuple(Point(k, k, at("mps", k), at("timeslice", k)) for k in ks)
    crossover = below = None
    outcome = "none"
    if points:
        crossover, below, outcome = copies_crossover(list(ks), [p.gain for p in points], threshold)
    return AppVerdict(name, threshold, best, alone, timeslice, points, crossover, below, outcome, failed)


def verdicts(results: Iterable[Result], threshold: float | None = None) -> list[KernelVerdict | AppVerdict]:
    """One verdict per kernel (precision, parameters) and per application, in the order they first appear."""
    threshold = GAIN_THRESHOLD if threshold is None else threshold
    groups: dict[tuple[str, str, str, str], list[Result]] = {}
    for r in results:
        if r.kind != "mix":
            groups.setdefault(r.subject, []).append(r)
    return [(_app_verdict if key[0] == "app" else _kernel_verdict)(mine, threshold) for key, mine in groups.items()]


def verdict_lines(found: Sequence[KernelVerdict | AppVerdict]) -> list[str]:
    """The verdict lines as the sweep prints them: kernels, then applications; where every kernel lacks
    the same mode (the CPU device runs streams only), that is said once."""
    kernels = [v for v in found if isinstance(v, KernelVerdict)]
    apps = [v for v in found if isinstance(v, AppVerdict)]
    whys = {v.why for v in kernels}
    if len(kernels) > 1 and len(whys) == 1 and all(v.outcome == "none" and " not measured " in v.why
                                                   for v in kernels):
        lines = [f"verdict: every kernel: {whys.pop()}"]
    else:
        lines = [v.line for v in kernels]
    return lines + [v.line for v in apps]
