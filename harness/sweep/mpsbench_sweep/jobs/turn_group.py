"""A group of jobs (one round's modes) run at once, taking turns of one configuration (turns.py).

The same steps as drive() (protocol.py), for every job of the group together: each is prepared and
launched with signals held (so the runner's cleanup ends every one of them), the sweep waits until all
have ended (a job that ends is taken out of the turns at once, so the others go on without it), then
each is ended, collected and its record finished before the merged file is rewritten, and judged last.
A job that failed does not cut the others short: what they measure is kept, then the first failure
stops the sweep as it would have alone.
"""
import queue
import shlex
import threading
import time

from ..nvsmi import ServerMemoryPoller
from ..text import say
from ..turns import TurnHub
from .outcome import Interrupted, Stop
from .protocol import daemon_record


def _waiter(run, ended):
    try:
        run.wait()
    finally:
        ended.put(run)


def drive_group(runs, total, signals, on_current, on_finished):
    """Runs the group's JobRuns (MpsbenchRun); on_current and on_finished as drive()'s."""
    hub = None
    poller = None
    interrupted = False
    walls = {}
    ended = queue.Queue()
    with signals.deferred():
        on_current(runs)  # from here on the runner's cleanup ends and closes them
        hub = TurnHub([run.job.index for run in runs])
        for run in runs:
            run.turns, run.group_size = hub.path(run.job.index), len(runs)
            run.prepare()
            run.record["command"] = shlex.join(run.command())
            say(f"[{run.job.index + 1}/{total}] {run.label}, taking turns: {run.record['command']}")
        started = time.monotonic()
        for run in runs:
            run.launch()
            run.record["status"] = "running"
    try:
        if any(run.daemon is not None for run in runs):
            poller = ServerMemoryPoller().start()
        for run in runs:
            threading.Thread(target=_waiter, args=(run, ended), daemon=True).start()
        for _ in runs:
            run = ended.get()
            walls[run.job.index] = time.monotonic() - started
            hub.end(run.job.index)
    except Interrupted:
        interrupted = True
        for run in runs:
            if run.job.index not in walls:
                run.record["status"] = "interrupted"
        raise
    finally:
        with signals.deferred():
            for run in runs:
                run.end()
            on_current(None)
            turns = hub.close()
            server_memory = poller.stop() if poller else None
            for run in runs:
                record = run.record
                record["wall_s"] = round(walls.get(run.job.index, time.monotonic() - started), 3)
                record["turns"] = dict(turns[run.job.index], problem=hub.problems.get(run.job.index))
                if run.daemon is not None:
                    record["daemon"] = daemon_record(run.daemon, server_memory)
                run.collect(interrupted)
                run.close()
            on_finished()
    stop = None
    for run in runs:
        try:
            run.judge()
        except Stop as e:
            stop = stop or e
        record = run.record
        say(f"{run.label}: {record['status']} in {record['wall_s']:.0f} s (waited {record['turns']['waited_s']:.0f} s "
            f"for {record['turns']['turns']} turns)"
            + (f": {record['error']}" if record.get("error") and record["status"] != "ok" else ""))
    if stop is not None:
        raise stop
