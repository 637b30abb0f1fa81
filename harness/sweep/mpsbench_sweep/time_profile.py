"""Where a sweep's time went: per job, the measurement (timed windows, warm-up) against everything else,
and the sweep's own work between the jobs. Recorded as context.sweep.time_profile and printed last.

Per job:
  wall_s           the job from its launch to its end (the sweep's clock); the jobs of a turn group run at
                   once, each wall counting the others' turns (context.sweep.jobs[].turns.waited_s)
  windows_s        timed windows: mpsbench's per-configuration `timing.windows_s` summed over its results,
                   or a farmed application's repetitions' windows
  warmup_s         warm-up: `timing.warmup_s` summed, or the application's warm-up window
  outside_s        wall_s - windows_s - warmup_s: set-up, calibration, verification, reporting, process start
  process_start_s  mpsbench jobs: wall_s - the engine's own `context.timing.total_s` (mpirun, MPI_Init and
                   the processes' start and end that the engine's clock does not see)
  merge_s          reading the part and rewriting the merged file after the job
Sweep: daemon_start_s, daemon_stop_s (the MPS daemons), merge_s (all merges), between_jobs_s (the rest of
the time outside any job: preflight, preparing each job, the final cleanup), total_s (from the start of the
sweep to its last write). A field the job's records do not give (an engine without `timing`) is null.
"""
import math

from .text import printable


def _num(value):
    return float(value) if isinstance(value, (int, float)) and not isinstance(value, bool) \
        and math.isfinite(value) else None


def _summed(results, key):
    values = [_num((r.get("timing") or {}).get(key)) for r in results if isinstance(r, dict)]
    return sum(values) if values and all(v is not None for v in values) else None


def engine_timing(doc):
    """{windows_s, warmup_s, engine_s} of an mpsbench part file (None where it has no timing records)."""
    if not isinstance(doc, dict):
        return {}
    results = [r for r in doc.get("results", []) if isinstance(r, dict) and r.get("kind") != "app"]
    total = _num((doc.get("context", {}).get("timing") or {}).get("total_s"))
    if not results:
        return {"engine_s": total} if total is not None else {}
    return {"windows_s": _summed(results, "windows_s"), "warmup_s": _summed(results, "warmup_s"), "engine_s": total}


def job_profile(record, timing, merge_s):
    wall = _num(record.get("wall_s"))
    windows, warmup, engine = timing.get("windows_s"), timing.get("warmup_s"), timing.get("engine_s")
    outside = wall - windows - warmup if None not in (wall, windows, warmup) else None
    return {"label": record["label"], "wall_s": wall, "windows_s": windows, "warmup_s": warmup,
            "outside_s": outside, "process_start_s": wall - engine if None not in (wall, engine) else None,
            "merge_s": merge_s}


def profile(records, timings, merges, daemons, total_s):
    """The sweep's profile: records of the jobs that ran, timings {index: job timing}, merges {index: s}."""
    jobs = [job_profile(r, timings.get(i, {}), merges.get(i)) for i, r in enumerate(records)
            if r.get("wall_s") is not None]
    start = sum(_num(d.get("start_s")) or 0.0 for d in daemons)
    stop = sum(_num(d.get("stop_s")) or 0.0 for d in daemons)
    merge = sum(merges.values())
    # The jobs of a turn group (turns.py) ran at once: the group takes the longest of their walls.
    spans = {}
    for i, r in enumerate(records):
        if r.get("wall_s") is not None:
            key = ("group", r["turn_group"]) if r.get("turn_group") is not None else ("job", i)
            spans[key] = max(spans.get(key, 0.0), _num(r["wall_s"]) or 0.0)
    walls = sum(spans.values())
    return {"total_s": round(total_s, 3), "jobs": jobs, "daemon_start_s": round(start, 3),
            "daemon_stop_s": round(stop, 3), "merge_s": round(merge, 3),
            "between_jobs_s": round(max(0.0, total_s - walls - start - stop - merge), 3)}


def _s(value):
    return "-" if value is None else f"{value:.1f}"


def lines(prof):
    """The short table printed at the end of a sweep."""
    if not prof["jobs"]:
        return []
    rows = [["job", "wall", "windows", "warm-up", "outside", "outside %", "process start"]]
    for j in prof["jobs"]:
        share = j["outside_s"] / j["wall_s"] if j["outside_s"] is not None and j["wall_s"] else None
        rows.append([printable(j["label"]), _s(j["wall_s"]), _s(j["windows_s"]), _s(j["warmup_s"]),
                     _s(j["outside_s"]), "-" if share is None else f"{share * 100:.0f}%", _s(j["process_start_s"])])
    widths = [max(len(r[i]) for r in rows) for i in range(len(rows[0]))]
    table = ["  ".join(c.ljust(w) if i == 0 else c.rjust(w) for i, (c, w) in enumerate(zip(r, widths)))
             for r in rows]
    daemons = prof["daemon_start_s"] + prof["daemon_stop_s"]
    head = (f"where the time went (s): {prof['total_s']:.1f} in all; outside the jobs: "
            + (f"MPS daemons {daemons:.1f} (start {prof['daemon_start_s']:.1f}, stop {prof['daemon_stop_s']:.1f}), "
               if daemons else "")
            + f"merging {prof['merge_s']:.1f}, the rest {prof['between_jobs_s']:.1f}")
    return [head] + table + ["outside = wall - windows - warm-up: set-up, calibration, verification, reporting, "
                             "process start (mpsbench: wall - the engine's own clock); '-' where the job's records "
                             "carry no timing"]
