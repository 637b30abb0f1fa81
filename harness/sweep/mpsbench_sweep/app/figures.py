"""A configuration's figure in the program's own unit, from what every node's farmer reported.

The copies are numbered globally (node order x copies per node + local index); run times are each
node's own, since its window started (every node starts a window on the same line of the sweep).

--app-metric (method "metric"): each run that counted (exited 0, --app-check passed) reported a
rate. A run is rated when it overlapped, in time, a run of every other copy: a rate taken while the
GPU was not shared by all copies says nothing about sharing. A copy's rate in a repetition is the
mean of its rated runs' rates; the repetition's figure is the sum over the copies. How much of its
time each rated run had every other copy running beside it is measured too: the least is recorded
(least_shared), and below SHARED_ENOUGH the sweep says the figure was partly taken alone (a program
that times its own loop while another copy is still starting reports more than the copies get together).

--app-progress (method "progress"): each copy ran once per window, its counter lines timestamped as
they arrived. The common window of a repetition runs from the moment every copy has printed its
first counter line to the moment the first copy printed its last one (no copy still starting, none
finished). A copy's rate is its counter's increase across that window (linear between its lines:
mpsbench_core.app_energy.counter_at) over the window's length; the figure is the sum over the copies.
A copy's start-up is the time from its run's start to its first counter line.

Short runs (issue 36). Where the copies' start-ups differ by much of their runs, the common window is a
small, odd stretch (a copy still in its first slow iterations, or one sharing the GPU with fewer copies)
and its figure need not be what the copies report. The rule: a repetition's figure is taken only where
there is a common window and its figure lies within AGREE of the copies' own (each copy's counter from
its own first to its own last line, over that time, summed: what examples/together.py reports for the
same copies run by hand). Otherwise the configuration fails with one line saying what was seen and how
much more work each run needs (an estimate: the start-up differences stay, the counting grows with the
work); never a figure that is off.

Anything that keeps a figure from being taken is a FigureError: one line naming the pattern.
"""
import math

from mpsbench_core import stats
from mpsbench_core.app_energy import counter_at
from mpsbench_core.units import format_count

# The short-run rule (module doc): how far the common window's figure may lie from the copies' own.
AGREE = 0.05
# Without a common window: the share of the copies' counting that may lie outside it in a run long enough
# (for the refusal's estimate of the work a run needs; the rule itself is AGREE).
OUTSIDE_TARGET = 0.25


class FigureError(Exception):
    """The program's output does not give the figure (one line, naming the pattern)."""


def _copies(events, per_node):
    """{global copy: (host, [runs])} of one repetition."""
    out = {}
    for node, event in enumerate(events):
        for run in event["runs"]:
            out.setdefault(node * per_node + run["copy"], (event["host"], []))[1].append(run)
    return out


def _stderr_hint(run):
    """Where the figure went to stderr instead (progress bars such as tqdm write there): how to read it."""
    line = run.get("stderr_match")
    return (f"; its stderr has a matching line ({line!r}): the figure is read from stdout, so run the program "
            "as sh -c '... 2>&1'") if line else ""


def counted(run):
    """A run counts when it exited 0 and its --app-check (if any) passed."""
    return run["exit_code"] == 0 and run.get("check_exit_code") in (None, 0)


def _overlaps(run, others):
    end = run["start_s"] + run["duration_s"]
    return any(o["start_s"] < end and run["start_s"] < o["start_s"] + o["duration_s"] for o in others)


# A rated run that shared the GPU with every other copy's runs for less of its time than this ran partly
# alone: its own rate overstates what the copies get together (the sweep says so, job.py).
SHARED_ENOUGH = 0.9


def _shared(run, others):
    """The share of the run's time during which every other copy had a run going (1.0 without others)."""
    start, end = run["start_s"], run["start_s"] + run["duration_s"]
    if end <= start or not others:
        return 1.0
    cuts = sorted({start, end} | {t for o in others for r in o for t in (r["start_s"], r["start_s"] + r["duration_s"])
                                  if start < t < end})
    covered = 0.0
    for a, b in zip(cuts, cuts[1:]):
        mid = (a + b) / 2
        if all(any(r["start_s"] <= mid <= r["start_s"] + r["duration_s"] for r in o) for o in others):
            covered += b - a
    return covered / (end - start)


def metric_figures(spec, windows, per_node):
    """{"samples": [figure per repetition], "per_copy": {copy: [rate per repetition]}, "rated_runs",
    "unrated_runs", "least_shared" (the smallest _shared of a rated run; None for one copy)} for method
    metric."""
    samples, per_copy, rated_total, unrated, shared = [], {}, 0, 0, []
    for rep, events in enumerate(windows):
        copies = _copies(events, per_node)
        figure = 0.0
        for copy, (host, runs) in sorted(copies.items()):
            good = [r for r in runs if counted(r)]
            for r in good:
                if r.get("metric") is None:
                    found = r.get("metric_line")
                    raise FigureError(
                        f"{spec.described()}: copy {copy} on {host}, repetition {rep + 1} run {r['number'] + 1} "
                        + (f"printed a matching line whose group is not a number: {found!r}" if found else
                           "printed no line of its stdout matching it") + f" ({r['stdout']})" + _stderr_hint(r))
            others = [[o for o in c_runs if counted(o)] for c, (_, c_runs) in copies.items() if c != copy]
            rated = [r for r in good if all(_overlaps(r, o) for o in others)]
            rated_total += len(rated)
            unrated += len(good) - len(rated)
            if good and not rated:
                raise FigureError(f"{spec.described()}: copy {copy} on {host}, repetition {rep + 1}: none of its "
                                  "runs overlapped a run of every other copy, so none was measured on a GPU "
                                  "shared by all copies")
            if others:
                shared += [_shared(r, others) for r in rated]
            rate = stats.mean([r["metric"] for r in rated]) if rated else 0.0
            per_copy.setdefault(copy, []).append(rate)
            figure += rate
        samples.append(figure)
    return {"samples": samples, "per_copy": per_copy, "rated_runs": rated_total, "unrated_runs": unrated,
            "least_shared": min(shared) if shared else None}


def _own(samples):
    """A copy's own figure: its counter from its first to its last line over that time (None for one line)."""
    (t0, v0), (t1, v1) = samples[0], samples[-1]
    return (v1 - v0) / (t1 - t0) if t1 > t0 else None


def _too_short(spec, rep, lines, begin, end, figure=None, own=None):
    """The FigureError of a repetition whose runs are too short for a figure (module doc): what was seen, and
    about how much more work each run needs. figure and own: the two figures, where there is a common window."""
    spans = [s[-1][0] - s[0][0] for _, _, s in lines.values()]
    firsts = [s[0][0] for _, _, s in lines.values()]
    counting = stats.mean(spans)
    if figure is None:
        last = min(lines, key=lambda c: lines[c][2][-1][0])
        first = max(lines, key=lambda c: lines[c][2][0][0])
        seen = (f"no common window: copy {last} printed its last counter line at {end:.2f} s, before copy {first} "
                f"printed its first at {begin:.2f} s")
        times = (counting - max(0.0, end - begin)) / counting / OUTSIDE_TARGET if counting > 0 else math.inf
    else:
        apart = abs(figure - own) / own
        seen = (f"the copies counted together for {end - begin:.2f} s of their {counting:.2f} s each (the common "
                f"window), whose figure, {format_count(figure, spec.unit)}, is {apart:.0%} from the copies' own "
                f"over their own counting, {format_count(own, spec.unit)} (each copy's counter from its first to its "
                f"last line, as when run by hand); at most {AGREE:.0%} is taken")
        times = 1.5 * apart / AGREE
    if not math.isfinite(times):
        need = "each copy printed one counter line: give each run more work, or print the counter more often"
    else:
        times = max(2, math.ceil(times))
        need = (f"the copies' first counter lines lie {max(firsts) - min(firsts):.2f} s apart: give each run at least "
                f"{times}x the work (more steps or iterations; it counted for {counting:.2f} s, so about "
                f"{times * counting:.0f} s), so that the copies count together for most of it")
    return FigureError(f"{spec.described()}: repetition {rep + 1}: {seen}; {need}")


def progress_figures(spec, windows, per_node):
    """{"samples", "per_copy", "window_s": [common window per repetition], "startup_s": {copy: [...]},
    "startup_share"} for method progress."""
    samples, per_copy, common, startup, shares = [], {}, [], {}, []
    for rep, events in enumerate(windows):
        lines = {}
        for copy, (host, runs) in sorted(_copies(events, per_node).items()):
            run = runs[0]
            progress = run.get("progress") or {}
            if not progress.get("samples"):
                raise FigureError(f"{spec.described()}: copy {copy} on {host}, repetition {rep + 1}: no line of its "
                                  f"stdout matched it ({run['stdout']})" + _stderr_hint(run))
            lines[copy] = (host, run, [tuple(s) for s in progress["samples"]])
        begin = max(s[0][0] for _, _, s in lines.values())
        end = min(s[-1][0] for _, _, s in lines.values())
        if end <= begin:
            raise _too_short(spec, rep, lines, begin, end)
        rates = {copy: (counter_at(s, end) - counter_at(s, begin)) / (end - begin) for copy, (_, _, s) in lines.items()}
        figure, own = sum(rates.values()), sum(_own(s) for _, _, s in lines.values())
        if abs(figure - own) > AGREE * own:
            raise _too_short(spec, rep, lines, begin, end, figure, own)
        for copy, (host, run, s) in lines.items():
            per_copy.setdefault(copy, []).append(rates[copy])
            start = max(0.0, s[0][0] - run["start_s"])
            startup.setdefault(copy, []).append(start)
            shares.append(start / run["duration_s"] if run["duration_s"] > 0 else 0.0)
        samples.append(figure)
        common.append(end - begin)
    return {"samples": samples, "per_copy": per_copy, "window_s": common, "startup_s": startup,
            "startup_share": stats.mean(shares) if shares else None}


def figures(spec, windows, per_node):
    return (metric_figures if spec.method == "metric" else progress_figures)(spec, windows, per_node)
