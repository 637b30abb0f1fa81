"""The one answer to "does MPS help, and with how many processes per GPU?": the verdict of a results file.

The sweep prints these lines at the end of a run, `mpsbench-analyze verdict FILE` prints the same lines
from the file, and the report says the same sentences: all three call this module.

Definitions (the MPS gain pays off at ``threshold``, GAIN_THRESHOLD unless the run said otherwise):

* A round of a configuration counts when it was measured (status ok), verified and has a positive median of
  its primary metric; others are left out and counted. A configuration's figure is the geometric mean of its
  counted rounds' medians (rounds.py); every ratio between configurations is paired by round and has a 95 %
  interval from the spread between rounds (intervals.py).
* Kernels (per kernel, precision and parameters). At each size S, among the ranks per GPU k measured in both
  mps and timeslice, the **best ranks per GPU** of a mode is the fewest ranks whose throughput is within noise
  of that mode's fastest (the interval of x(k) / x(fastest) reaches 1): fewer processes are cheaper to run.
  The MPS gain at S is the best of mps against the best of timeslice (usually one rank per GPU, no sharing):
  what turning MPS on buys over the best a user can do without it. (Not mps / timeslice at one k: at one
  rank per GPU that is 1.0 by construction, and whether the fewest ranks within noise were 1 or 2 then
  flipped the verdict between runs.) Where the gain of each mode's fastest ranks per GPU pays off and
  that of the best does not, or the other way round, the data cannot tell which ranks per GPU are best,
  nor so whether MPS pays off: "cannot tell", the range spanning both intervals and the fastest's gain
  given beside the best's (a k=1 that varied between rounds is "within noise" of a k=2 that MPS makes
  1.3x faster: on two of five H200 runs, matmul tf32 1024 then read "does not pay off"). series.py says
  where it pays off, where it does not and where the data cannot tell, and where the crossover lies (a
  range). The table's MPS gain column is the other question, mps / timeslice at the same ranks per GPU.
* Applications (per name and binding): app_verdict.py, by the same rules over copies per GPU.
* Mixes are judged per tenant (mix.py), each tenant's cost with its interval over the rounds.
* The energy side, where both sides carry an energy per unit of work (energy.py), on the representative
  rounds: "MPS at k=8 (size 4096): 1.80x the throughput at 0.60x the energy per TFLOP".
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Iterable, Sequence

from . import modes
from .app_verdict import AppVerdict, app_verdict, startup_share, throughput_and_energy
from .mix import MixVerdict, mix_verdict
from .records import Result
from .rounds import configs, fastest, fastest_pairs, fewest_within_noise, gain_pairs, pool_of, ratio
from .series import Outcome, Point, outcome, rounds_note, where

#: The MPS gain over time slicing that "pays off".
GAIN_THRESHOLD = 1.1

__all__ = ["GAIN_THRESHOLD", "AppVerdict", "KernelVerdict", "MixVerdict", "Point", "Verdict",
           "startup_share", "throughput_and_energy", "verdict_items", "verdict_lines", "verdicts"]


@dataclass(frozen=True)
class KernelVerdict:
    """Where MPS pays off for one kernel, precision and parameters."""

    kernel: str
    precision: str
    params: str
    threshold: float
    points: tuple[Point, ...]       # by ascending size, at each size's best ranks per GPU
    outcome: str                    # series.outcome: every, never, unclear, below, from, mixed; "none"
    between: tuple[int, int] | None  # the crossover range of "below" (and "from": MPS pays off above it)
    left_out: int                   # rounds of mps/timeslice configurations that failed or did not verify
    why: str = ""                   # why there is no verdict (outcome "none")

    @property
    def subject(self) -> str:
        return f"{self.kernel} {self.precision}" + (f" ({self.params})" if self.params else "")

    @property
    def crossover(self) -> int | None:
        """The upper end of the crossover range: the first size at which MPS is known not to pay off
        ("below"), or known to ("from")."""
        return self.between[1] if self.between else None

    @property
    def sentence(self) -> str:
        if self.outcome == "none":
            return self.why
        by_size = ", ".join(f"{p.at} k={p.k}{p.against} {p.gain_text}" for p in self.points)
        return (f"{where(self.points, self.threshold, 'size')}; best ranks/GPU and MPS gain [95% interval] by size: "
                f"{by_size}{rounds_note(self.points)}{self._energy()}{self._left_out()}")

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
        return f"; {self.left_out} round(s) failed or unverified, left out" if self.left_out else ""

    @property
    def line(self) -> str:
        return f"verdict: {self.subject}: {self.sentence}"


def _kernel_verdict(mine: list[Result], threshold: float) -> KernelVerdict:
    kernel, precision, params = mine[0].name, mine[0].precision, mine[0].params
    measured = sorted({r.mode for r in mine}, key=modes.sort_key)
    missing = [m for m in ("timeslice", "mps") if m not in measured]
    if missing:
        why = f"no MPS verdict: {' and '.join(missing)} not measured (measured: {', '.join(measured) or 'nothing'})"
        return KernelVerdict(kernel, precision, params, threshold, (), "none", None, 0, why)
    found = [c for c in configs(mine) if c.first.mode_label in ("timeslice", "mps")]
    left_out = sum(c.left_out for c in found)
    at = {(c.first.mode_label, c.first.size, c.first.ranks_per_gpu): c for c in found if c.figure is not None}
    per_size: dict[int, dict[str, list]] = {}
    for (mode, s, k) in sorted(at, key=lambda key: key[2]):
        per_size.setdefault(s, {}).setdefault(mode, []).append(at[(mode, s, k)])
    per_size = {s: sides for s, sides in sorted(per_size.items(), key=lambda item: (item[0] is None, item[0] or 0))
                if len(sides) == 2}  # a hostile file's null size sorts last
    if not per_size:
        why = "no MPS verdict: no size has verified mps and timeslice results" + (
            f"; {left_out} round(s) failed or unverified, left out" if left_out else "")
        return KernelVerdict(kernel, precision, params, threshold, (), "none", None, left_out, why)
    rank_pool = pool_of(pair for sides in per_size.values() for candidates in sides.values()
                        for pair in fastest_pairs(candidates))
    gain_pool = pool_of(gain_pairs(found))
    points = []
    for s, sides in per_size.items():
        m = fewest_within_noise(sides["mps"], rank_pool)
        t = fewest_within_noise(sides["timeslice"], rank_pool)
        gain = ratio(m, t, gain_pool)
        fm, ft = fastest(sides["mps"]), fastest(sides["timeslice"])
        top = ratio(fm, ft, gain_pool) if gain is not None and (fm, ft) != (m, t) else None
        if top is not None and {top.side(threshold), gain.side(threshold)} != {"above", "below"}:
            top = None  # only where one says "pays off" and the other "does not" is the best's answer in doubt
        points.append(Point(s, m.first.ranks_per_gpu, m.figure, t.figure, gain, m.representative.energy,
                            t.representative.energy, t.first.ranks_per_gpu, top,
                            (fm.first.ranks_per_gpu, ft.first.ranks_per_gpu) if top is not None else None))
    found_outcome: Outcome = outcome(points, threshold)
    return KernelVerdict(kernel, precision, params, threshold, tuple(points), found_outcome.kind,
                         found_outcome.between, left_out)


Verdict = KernelVerdict | AppVerdict | MixVerdict


def _mix(mine: list[Result]) -> MixVerdict:
    """A mix's verdict over its rounds (mix.py)."""
    return mix_verdict(mine)


def verdicts(results: Iterable[Result], threshold: float | None = None) -> list[Verdict]:
    """One verdict per kernel (precision, parameters), per application (binding) and per mix, in the order
    they first appear."""
    threshold = GAIN_THRESHOLD if threshold is None else threshold
    groups: dict[tuple[str, str, str, str], list[Result]] = {}
    for r in results:
        groups.setdefault(r.subject, []).append(r)
    judge = {"app": lambda mine: app_verdict(mine, threshold), "mix": _mix}
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
