"""``mpsbench-analyze agree FILE FILE ...``: whether several runs of the same suite give the same answer.

Each file is one run, judged alone and then against the others by core's definition
(mpsbench_core.agreement): the pairs of two runs' gains that are consistent (differ by no more than their
two intervals allow), the gains inside every other run's 95 % interval, the points where one run says MPS
pays off and another that it does not, and each run's A/A row. Exit status 0 when they agree, 1 when they
do not (the gate a user puts on their own cluster), 2 on bad input: fewer than two files, one run given twice
(two files with the same measurements), runs that share no configuration measured in mps and timeslice.
"""

from __future__ import annotations

from collections.abc import Sequence

from mpsbench_core.agreement import AGREE_SHARE, Agreement, agreement
from mpsbench_core.units import format_percent
from mpsbench_core.verdict import verdict_lines

from .context import context_differences
from .errors import AnalysisError
from .loader import load_results
from .verdicts import threshold_for

#: At most this many gains outside are listed one by one (the count is always given).
LISTED = 20


def percent_text(part: int, whole: int) -> str:
    """part / whole as core's percentage (units.format_percent, to 0.1), first rounded down: a share just under
    AGREE_SHARE (402 of 448, 89.7 %) never prints as the share it misses ("90%"), so the line and the agree:
    verdict cannot tell two stories."""
    # the floor in integers: no float lands a hair above it
    return format_percent((1000 * part // whole) / 1000 if whole > 0 else 0.0)


def agree(paths: list[str], threshold: float | None = None) -> tuple[Agreement, list[str]]:
    """The agreement of the files (one run each) and its lines."""
    if len(paths) < 2:
        raise AnalysisError("agree needs two results files or more (one per run)")
    sets = [load_results([p]) for p in paths]
    thresholds = {threshold_for(rs, threshold) for rs in sets}
    if len(thresholds) > 1:
        raise AnalysisError(f"the runs recorded different gain thresholds ({', '.join(f'{t:g}' for t in sorted(thresholds))}): "
                            "give --threshold to judge them together")
    runs = [rs.records() for rs in sets]
    _refuse_one_run_twice(runs, paths)
    found = agreement(runs, thresholds.pop())
    if found.consistent[1] == 0:
        raise AnalysisError("the runs share no configuration measured in both mps and timeslice: agree compares "
                            "runs of one suite (the same kernels, sizes and ranks per GPU)")
    return found, lines(found, paths, other_devices([next(iter(rs.contexts.values())) for rs in sets]))


def other_devices(contexts: list[dict]) -> list[str]:
    """A line for each run on another kind of device than run 1 (compare's mismatch fields: the GPU model, the
    number of GPUs, GPU or CPU): its gains may differ from run 1's for real, not by noise."""
    out = []
    for i, ctx in enumerate(contexts[1:], start=2):
        bad = [d for d in context_differences(contexts[0], ctx) if d.mismatch]
        if bad:
            out.append(f"run {i} ran on another device than run 1 ("
                       + "; ".join(f"{d.field}: run 1 {d.base}, run {i} {d.new}" for d in bad)
                       + "): its gains may differ for real, not by noise")
    return out


def _measured(records: list) -> frozenset:
    """What a run measured: each record's configuration, round and samples."""
    return frozenset((r.kind, r.name, r.precision, r.size, r.params, r.mode_label, r.ranks_per_gpu,
                      r.raw.get("round"), r.samples) for r in records if r.samples)


def _refuse_one_run_twice(runs: list[list], paths: list[str]) -> None:
    """Two files with the same samples are one run (a copy, the .json beside its .json.gz, a path given twice):
    independent runs never measure the same floating-point figures, and one run held against itself would
    agree whatever its noise."""
    seen: dict[frozenset, str] = {}
    for records, path in zip(runs, paths):
        measured = _measured(records)
        if measured and measured in seen:
            raise AnalysisError(f"{path} holds the same measurements as {seen[measured]}: one run given twice "
                                "(agree needs independent runs)")
        seen.setdefault(measured, path)


def lines(a: Agreement, paths: list[str], devices: Sequence[str] = ()) -> list[str]:
    out = [f"run {i + 1}: {p}" for i, p in enumerate(paths)] + list(devices)
    ok, pairs = a.consistent
    out.append(f"consistent: {ok} of {pairs} pairs of two runs' gains ({percent_text(ok, pairs)}) differ by no more "
               f"than their two 95% intervals allow together (at least {AGREE_SHARE:.0%} needed; right intervals "
               "give 95% or more)")
    inconsistent = a.inconsistent()
    for cell, i, j in inconsistent[:LISTED]:
        x, y = cell.intervals[i], cell.intervals[j]
        out.append(f"  inconsistent: {cell.name}: run {i + 1} {x.point:.2f}x [{x.text}], run {j + 1} {y.point:.2f}x "
                   f"[{y.text}]")
    if len(inconsistent) > LISTED:
        out.append(f"  ... and {len(inconsistent) - LISTED} more")
    inside, compared = a.inside
    out.append(f"gains: {inside} of {compared} ({percent_text(inside, compared)}) inside every other run's 95% "
               "interval (stricter: each point is as noisy as the interval it is held against, so even right "
               "intervals fail it far more often than 5%)")
    inside, compared = a.inside_pairs
    out.append(f"  each against each: {inside} of {compared} ({percent_text(inside, compared)}) of the gains inside the "
               "other run's 95% interval (right intervals: about 91%)")
    outside = a.outside()
    for cell, i in outside[:LISTED]:
        mine = cell.intervals[i]
        others = ", ".join(f"run {j + 1} {x.point:.2f}x [{x.text}]" for j, x in enumerate(cell.intervals)
                           if j != i and x is not None)
        out.append(f"  outside: {cell.name}: run {i + 1} {mine.point:.2f}x against {others}")
    if len(outside) > LISTED:
        out.append(f"  ... and {len(outside) - LISTED} more")
    out.append(f"verdicts: {len(a.contradictions)} of {a.judged_points} points judged by two runs or more are "
               "'pays off' in one run and 'does not' in another")
    for c in a.contradictions:
        out.append(f"  contradicted: {c.subject} at {c.at}: " + ", ".join(
            f"run {i + 1} {x}" for i, x in enumerate(c.classes) if x is not None))
    for i, aa in enumerate(a.aa):
        if aa.line:
            out.append(f"run {i + 1} {aa.line}")
    joint = verdict_lines(a.joint)
    if joint:
        out.append(f"joint verdict of the {a.runs} runs (each run one round, its figure its own: every interval is "
                   "made of the spread between the runs):")
        out += ["  " + line for line in joint]
    out.append("agree: " + ("yes" if a.agree else "NO") + f" ({a.runs} runs)")
    return out
