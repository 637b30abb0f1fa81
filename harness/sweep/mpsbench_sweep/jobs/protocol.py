"""The one protocol every job follows, and the finishing code they share.

A job (an mpsbench job, a step of the client ramp, a configuration of a farmed application) is a
JobRun: it says its command, launches its processes, waits for them (or --timeout), ends whatever of
it still runs, collects its outcome into its record, and judges whether the sweep goes on. drive()
is the sequence, the same for every kind: each process is recorded the moment it starts (signals are
held meanwhile, so nothing the sweep starts escapes its cleanup); on every path, the job is ended and
its record finished (wall time, the MPS server's memory) before the merged file is rewritten;
judging comes last, once the outcome is safe on disk.
"""
import os
import shlex
import time

from ..nvsmi import ServerMemoryPoller
from ..plan import mem_limit_bytes, mem_limit_env
from ..text import say
from .environment import JobEnvironment
from .outcome import Interrupted


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


def drive(run, total, signals, on_current, on_finished):
    """Runs one JobRun: on_current(run or None) tells the runner what to end on an interrupt; on_finished()
    rewrites the merged file after the record is complete."""
    record = run.record
    poller = None
    interrupted = False
    with signals.deferred():
        on_current(run)  # from here on the runner's cleanup ends and closes it
        run.prepare()
        record["command"] = shlex.join(run.command())
        say(f"[{run.job.index + 1}/{total}] {run.label}: {record['command']}")
        started = time.monotonic()
        run.launch()
        record["status"] = "running"
    try:
        poller = ServerMemoryPoller().start() if run.daemon is not None else None
        run.wait()
    except Interrupted:
        interrupted = True
        record["status"] = "interrupted"
        raise
    finally:
        with signals.deferred():
            run.end()
            on_current(None)
            record["wall_s"] = round(time.monotonic() - started, 3)
            if run.daemon is not None:
                record["daemon"] = daemon_record(run.daemon, poller.stop() if poller else None)
            run.collect(interrupted)
            run.close()
            on_finished()
    run.judge()
    say(f"{run.label}: {record['status']} in {record['wall_s']:.0f} s"
        + (f": {record['error']}" if record.get("error") and record["status"] != "ok" else ""))


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
