"""The one protocol every job follows, and the finishing code they share.

A job (an mpsbench job, a step of the client ramp, a configuration of a farmed application) is a
JobRun: it says its command, launches its processes, waits for them (or --timeout), ends whatever of
it still runs, collects its outcome into its record, and judges whether the sweep goes on. drive()
is the sequence, the same for every kind and for one job alone as for a turn group (one round's modes at
once, taking turns of one repetition: turns.py): each process is recorded the moment it starts (signals
are held meanwhile, so nothing the sweep starts escapes its cleanup); on every path, every job is ended
and its record finished (wall time, turns, the MPS server's memory) before the merged file is rewritten;
judging comes last, once the outcome is safe on disk. In a group a job that ends is taken out of the
turns at once, so the others go on without it, and a job that failed does not cut the others short:
what they measure is kept, then the first failure stops the sweep as it would have alone.
"""
import os
import queue
import shlex
import threading
import time

from ..nvsmi import ServerMemoryPoller
from ..plan import mem_limit_bytes, mem_limit_env
from ..text import say
from ..turns import TurnHub
from .environment import JobEnvironment
from .outcome import Interrupted, Stop


class JobRun:
    """One job of the plan as the runner drives it. Subclasses fill in the steps."""

    def __init__(self, job, record, settings, daemon):
        self.job, self.record, self.s, self.daemon = job, record, settings, daemon
        self.environment = None  # made just before the launch: its private directory must not leak
        self.proc = None  # the job's session leader: what the runner ends on every exit path

    @property
    def label(self):
        return self.job.label()

    def command(self):
        """The command line recorded and shown for the job."""
        raise NotImplementedError

    def prepare(self):
        self.environment = JobEnvironment(self.job, self.daemon, self.s.mem_device_ordinals)

    def launch(self):
        """Starts the job's processes in self.environment.env (called with signals held)."""
        raise NotImplementedError

    def wait(self):
        """Until the job ends or --timeout passes; may raise Stop (a contradiction the sweep cannot go on from)."""
        raise NotImplementedError

    def end(self):
        """Ends whatever of the job still runs; called on every path, with signals held."""
        raise NotImplementedError

    def collect(self, interrupted):
        """Fills the record from what the job left (its part file, its reports)."""
        raise NotImplementedError

    def judge(self):
        """Sets the record's final status; raises Stop when the sweep must stop."""
        raise NotImplementedError

    def close(self):
        if self.environment is not None:
            self.environment.close()


def drive(runs, total, signals, on_current, on_finished):
    """Runs one JobRun alone, or a turn group's (MpsbenchRun) together: on_current(runs or None) tells the
    runner what to end on an interrupt; on_finished() rewrites the merged file after the records are
    complete."""
    grouped = len(runs) > 1
    hub = poller = None
    interrupted = False
    walls = {}  # job index -> seconds from the launch until it ended
    with signals.deferred():
        on_current(runs)  # from here on the runner's cleanup ends and closes them
        if grouped:
            hub = TurnHub([run.job.index for run in runs])
        for run in runs:
            if grouped:
                run.turns, run.group_size = hub.path(run.job.index), len(runs)
            run.prepare()
            run.record["command"] = shlex.join(run.command())
            say(f"[{run.job.index + 1}/{total}] {run.label}{', taking turns' if grouped else ''}: "
                f"{run.record['command']}")
        started = time.monotonic()
        for run in runs:
            run.launch()
            run.record["status"] = "running"
    try:
        if any(run.daemon is not None for run in runs):
            poller = ServerMemoryPoller().start()
        for run in _as_they_end(runs):
            walls[run.job.index] = time.monotonic() - started
            if hub is not None:
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
            turns = hub.close() if hub is not None else None
            server_memory = poller.stop() if poller else None
            for run in runs:
                record = run.record
                record["wall_s"] = round(walls.get(run.job.index, time.monotonic() - started), 3)
                if turns is not None:
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
        waited = (f" (waited {record['turns']['waited_s']:.0f} s for {record['turns']['turns']} turns)"
                  if "turns" in record else "")
        say(f"{run.label}: {record['status']} in {record['wall_s']:.0f} s{waited}"
            + (f": {record['error']}" if record.get("error") and record["status"] != "ok" else ""))
    if stop is not None:
        raise stop


def _as_they_end(runs):
    """Each run as it ends: one job waited for here (its wait may raise Stop, which ends the sweep before it is
    judged), a group's each on a thread of its own (their deadlines are their own)."""
    if len(runs) == 1:
        runs[0].wait()
        yield runs[0]
        return
    ended = queue.Queue()
    for run in runs:
        threading.Thread(target=_waiter, args=(run, ended), daemon=True).start()
    for _ in runs:
        yield ended.get()


def _waiter(run, ended):
    try:
        run.wait()
    finally:
        ended.put(run)


def daemon_record(daemon, server_memory_bytes):
    """A job record's `daemon`: the MPS daemon that served it and the MPS server's peak memory while it ran."""
    return {"started_by_sweep": daemon["started_by_sweep"], "pipe_dir": daemon["pipe_dir"],
            "mps_server_memory_bytes": server_memory_bytes}


def job_record(job, workdir, mem_device_ordinals):
    """The job's entry in context.sweep.jobs before it runs."""
    record = {"mode": job.mode, "round": job.round, "label": job.label(), "ranks_per_gpu": list(job.ranks_per_gpu),
              "thread_percentage": job.thread_percentage, "np": job.np, "command": None, "status": "not_run",
              "exit_code": None, "error": None, "part_file": os.path.join(workdir, job.part_name), "daemon": None,
              "wall_s": None, "ranks": None}
    if job.turn_group is not None:
        record["turn_group"] = job.turn_group
    if job.mem_limit is not None:
        record.update({"mem_limit": job.mem_limit, "mem_limit_bytes": mem_limit_bytes(job.mem_limit),
                       "mem_limit_env": mem_limit_env(job.mem_limit, mem_device_ordinals)})
    if job.ramp:
        record.update({"client_ramp_step": True, "past_limit": job.past_limit, "expected_failure": False})
    return record
