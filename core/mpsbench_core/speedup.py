"""The speedup over one rank (one copy) per GPU: one definition for the writers (mpsbench-sweep --app:
results[].speedup_vs_one_copy_per_gpu) and the readers (the analysis checks it against the one-per-GPU record:
mpsbench_analysis.derived's table, through run_index.py).

It is a record's primary median over that of the same configuration and mode at one per GPU, in the same round
(mpsbench-sweep --rounds: each round's processes measured their own) and, for an application, the same binding.
At one per GPU the record is its own reference: its speedup is 1, never null (issue 36: an application's
one-copy configuration read null).
"""

from __future__ import annotations

import math


def speedup_vs_one_per_gpu(ranks_per_gpu: int, median: float | None, one_per_gpu: float | None) -> float | None:
    """median / one_per_gpu (the one-per-GPU median of the same mode, binding and round); 1.0 at one per GPU
    (one_per_gpu is then not needed: the record is its own); None where a figure is missing or not positive."""
    if median is None or not math.isfinite(median) or median <= 0:
        return None
    if ranks_per_gpu == 1:
        return 1.0
    if one_per_gpu is None or not math.isfinite(one_per_gpu) or one_per_gpu <= 0:
        return None
    return median / one_per_gpu
