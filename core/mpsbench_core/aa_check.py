"""The A/A row: at one rank per GPU, MPS against time slicing is one process either way, so every kernel's
gain there should be 1.0 within the noise. How many are not tells a user at once whether the machine was
too noisy to trust the run.

For every kernel configuration (kernel, precision, params, size) measured at k = 1 in both mps and timeslice:
its gain mps / timeslice with the 95 % interval of verdict.py (paired by round, pooled over the subject's
k = 1 gains). Counted: the gains within 3 % and beyond 10 % of 1.0, and the intervals that exclude 1.0. The
run is flagged when more intervals exclude 1.0 than chance explains: more than FLAG_SHARE of them, and at
least FLAG_AT_LEAST (a 95 % interval misses by chance about one time in twenty).

Where streams ran at k = 1 too, the row also holds the **plain A/A**: streams against timeslice there is one
ordinary process (one thread, no MPS) either way, so it measures the machine's and the harness's own noise
alone. It tells the two causes of a flagged row apart: a plain A/A that misses as often says the machine was
too noisy; a plain A/A within the noise beside mps intervals that exclude 1.0 says MPS itself costs a single
process that much at those cells (small kernels: an MPS client ran a 512 fp32 GEMM 4-5 % and nbody fp32 4096
3-5 % slower on an H200, in CUDA graphs with no host in the loop, results/h200-2026-11-29/development.txt).
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Iterable

from .intervals import Interval
from .records import Result
from . import rounds

#: Near 1.0: within this of it.
NEAR = 0.03
#: Far from 1.0: beyond this.
FAR = 0.10
#: Flag the run when more than this share of the k = 1 intervals exclude 1.0 ...
FLAG_SHARE = 0.10
#: ... and at least this many do.
FLAG_AT_LEAST = 2


@dataclass(frozen=True)
class AACell:
    subject: tuple
    size: int | None
    interval: Interval

    @property
    def name(self) -> str:
        _, kernel, precision, params = self.subject
        return f"{kernel} {precision}" + (f" ({params})" if params else "") + f" {self.size}"


@dataclass(frozen=True)
class AACheck:
    cells: tuple[AACell, ...]
    mode: str = "mps"
    plain: "AACheck | None" = None  # streams against timeslice at k = 1; None where streams has no k = 1 cell

    @property
    def near(self) -> int:
        return sum(abs(c.interval.point - 1.0) <= NEAR for c in self.cells)

    @property
    def far(self) -> tuple[AACell, ...]:
        return tuple(c for c in self.cells if abs(c.interval.point - 1.0) > FAR)

    @property
    def excluding(self) -> tuple[AACell, ...]:
        return tuple(c for c in self.cells if not c.interval.contains(1.0))

    @property
    def flagged(self) -> bool:
        n = len(self.excluding)
        return n >= FLAG_AT_LEAST and n > FLAG_SHARE * len(self.cells)

    def counts(self) -> str:
        """'26 of 28 gains within 3% of 1.0, beyond 10%: none; 1 of 28 intervals exclude 1.0 (...)'."""
        n = len(self.cells)
        far = self.far
        far_text = "none" if not far else f"{len(far)} (" + ", ".join(
            f"{c.name} {c.interval.point:.2f}x" for c in far) + ")"
        ex = self.excluding
        ex_text = f"{len(ex)} of {n} intervals exclude 1.0" + (" (" + ", ".join(
            f"{c.name} {c.interval.point:.2f}x [{c.interval.text}]" for c in ex) + ")" if ex else "")
        return f"{self.near} of {n} gains within {NEAR:.0%} of 1.0, beyond {FAR:.0%}: {far_text}; {ex_text}"

    @property
    def why_flagged(self) -> str:
        """Why the row is flagged, "" when it is not: the plain A/A, where there is one, says which cause."""
        plain = self.plain
        if plain is not None and plain.flagged:
            return ("the machine was too noisy to trust small gains in this run: the plain A/A, where MPS plays no "
                    "part, misses as well")
        if not self.flagged:
            return ""
        if plain is not None:
            return ("MPS costs a single process this much at those cells, not noise: the plain A/A is within the "
                    "noise")
        return "the machine was too noisy (or MPS costs a single process this much) to trust small gains in this run"

    @property
    def line(self) -> str:
        """'A/A (1 rank per GPU, mps against timeslice: one process either way): 26 of 28 gains within 3% of 1.0,
        beyond 10%: none; 1 of 28 intervals exclude 1.0 (nbody fp32 4096 0.95x [0.93x-0.97x])', then the plain
        A/A's counts where streams ran at k = 1, then why the row is flagged; "" with no cell."""
        if not self.cells:
            return ""
        plain = ""
        if self.plain is not None:
            plain = (f"; plain A/A (streams against timeslice: the same plain process, no MPS): "
                     f"{self.plain.counts()}")
        why = self.why_flagged
        flag = f"; FLAGGED: {why}" if why else ""
        return (f"A/A (1 rank per GPU, {self.mode} against timeslice: one process either way): {self.counts()}"
                f"{plain}{flag}")


def _one_rank(results: list[Result], mode: str) -> AACheck:
    found = rounds.gain_intervals(results, mode)  # pooled as the verdict pools
    return AACheck(tuple(AACell(subject, size, interval) for (subject, size, k), interval in found.items() if k == 1),
                   mode)


def aa_check(results: Iterable[Result]) -> AACheck:
    kernels = [r for r in results if r.kind == "kernel"]
    plain = _one_rank(kernels, "streams")
    return replace(_one_rank(kernels, "mps"), plain=plain if plain.cells else None)
