"""The order of the sharing modes in each round of a sweep (mpsbench-sweep --rounds).

A sweep measures every configuration once per round, each round in processes of its own. Run in one
fixed order (all timeslice, then all mps, ...), any drift of the host over the sweep (a warming GPU,
clocks, a neighbour's load, a filling page cache) would land wholly on the difference between the
modes, most of all on the MPS gain, whose two sides would run minutes apart. So each round runs the
modes in another order:

- round r rotates the list left by r // 2 and, when r is odd, reverses it. For timeslice,mps,streams:
  round 0 timeslice,mps,streams; 1 streams,mps,timeslice; 2 mps,streams,timeslice;
  3 timeslice,streams,mps.
- Reversing makes each pair of rounds (2j, 2j+1) balanced against a linear drift: a mode at position
  p in round 2j is at n-1-p in round 2j+1, so every mode's mean position over the pair is the same,
  (n-1)/2, and a drift linear in time adds the same to every mode's mean.
- Rotating between pairs changes which modes run next to each other and which runs first (right
  after a daemon start, a cold cache), so no mode keeps one neighbour or one place for the whole sweep.

Prior art: Google Benchmark's --benchmark_enable_random_interleaving, asv's interleaved processes,
hyperfine's repeated runs. A fixed rule rather than a random one: the same command gives the same
order, and the pairing above holds by construction rather than on average.

One definition: the sweep plans its jobs by it and records its result (context.sweep.rounds.orders,
sweep_settings.SweepRecord), so the file says the order the jobs ran in.
"""

from __future__ import annotations

from typing import Sequence


def mode_order(modes: Sequence[str], round_index: int) -> tuple[str, ...]:
    """The modes of round ``round_index`` (from 0), in the order their jobs run."""
    if round_index < 0:
        raise ValueError(f"round {round_index}: rounds count from 0")
    modes = tuple(modes)
    if not modes:
        return ()
    shift = (round_index // 2) % len(modes)
    rotated = modes[shift:] + modes[:shift]
    return rotated[::-1] if round_index % 2 else rotated


def orders(modes: Sequence[str], rounds: int) -> list[list[str]]:
    """Every round's order, as context.sweep.rounds.orders records it."""
    return [list(mode_order(modes, r)) for r in range(rounds)]
