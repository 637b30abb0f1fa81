"""One configuration (mode, copies per GPU) of a farmed application, seen from the sweep.

The sweep starts the farmers (farm.py: one per node, or one on this node for an
MPI application, whose launcher spreads the ranks itself) under a keeper, in the
mode's environment, sends them the configuration, and then, one step at a time
so that every node starts each window together: `warmup`, `window 0`, `window 1`,
... and `end`. It checks what mpsbench-probe saw against the mode (a
contradiction stops the sweep, as for the built-in kernels: exit 3), and turns
the reports into a results record (results.py). A failed run, a failed node or
--timeout fails only this configuration: its record says why and the sweep goes
on with the next one (exit status 1 at the end).
"""
import json
import os
import time

from .. import merge, safe_files
from ..jobs.outcome import EXIT_FAILED, Stop
from ..jobs.protocol import JobRun
from ..jobs.session import end_session, helper_command, kept
from ..node_channel import NodeChannel
from ..text import printable, say
from .context import app_context
from .figures import SHARED_ENOUGH
from .probe import state_problem
from .results import AppConfiguration, describe_run, run_place

SETUP_TIMEOUT_S = 300.0  # the probes of one node


class AppRun(JobRun):
    def __init__(self, job, record, settings, daemon, baselines):
        """baselines: {(mode, binding, round): the primary figure of one copy per GPU}, shared by the
        configurations of one sweep; a round's speedups are over its own one-copy run, which ran beside them."""
        super().__init__(job, record, settings, daemon)
        app = settings.app
        self.app, self.baselines = app, baselines
        self.farmers, self.nodes = farmer_command(settings.launcher, settings.nodes, app.launcher is not None)
        self.run_dir = run_dir_for(settings.workdir, job)
        self.config = AppConfiguration(
            app=app.identity, mode=job.mode, k=job.k, thread_percentage=job.thread_percentage, device=app.device,
            copies_per_node=app.copies_per_node(job.k), nodes=self.nodes, gpus_per_node=app.gpus_per_node,
            repetitions=app.repetitions, metric=app.metric, bind=job.bind)
        self.channel = None
        self.deadline = None
        self.hosts = []

    def _env(self):
        """The farmer's environment, which every copy inherits: the user's, plus the mode's and the sweep's
        own variables (never a PYTHONPATH of ours: the farmer finds its package through its own sys.path)."""
        return self.app.farmer_env(dict(self.environment.env))

    def command(self):
        return self.app.command_for(self.job.k, self._env())

    def spec(self):
        app = self.app
        return {"argv": self.command(), "check": list(app.check) if app.check else None, "min_time_s": app.min_time,
                "copies": self.config.copies_per_node, "gpus_per_node": app.gpus_per_node,
                "pin_gpus": app.launcher is None, "device": app.device, "probe": app.probe,
                "run_dir": self.run_dir, "metric": app.metric.to_json() if app.metric else None,
                "bind": self.job.bind, "energy": app.device == "gpu", "meter": app.meter}

    def launch(self):
        self.channel = NodeChannel(kept(self.farmers), self._env(), self.nodes)
        self.channel.launch()
        self.proc = self.channel.proc

    def end(self):
        """Ends the farmers and, through their keeper, every copy still running (all at once when the
        configuration did not end normally: a timeout, a failure, an interrupt)."""
        if self.channel is not None and self.channel.proc is not None:
            self.channel.close_input()
            end_session(self.channel.proc)

    def collect(self, interrupted):
        record = self.record
        if interrupted:
            self.config.fail("interrupted")
        key = (self.job.mode, self.job.bind, self.job.round)
        result = self.config.record(self.baselines.get(key))
        if result["status"] == "ok" and self.job.k == 1:
            self.baselines.setdefault(key, result["aggregate"][result["primary_metric"]]["median"])
        record["error"] = result["error"]
        record["copy_memory_bytes"] = result["app"]["gpu_memory_bytes"]
        record["copy_memory_method"] = result["app"]["gpu_memory_method"]
        record["timing"] = {"windows_s": round(sum(max(e["window_s"] for e in rep) for rep in self.config.windows), 3),
                            "warmup_s": round(max((e["window_s"] for e in self.config.warm), default=0.0), 3)}
        if not interrupted:
            record["status"] = ("run_failed" if result["status"] != "ok" else
                                "ok" if result["verified"] else "verification_failed")
        shared = ((result["app"].get("metric") or {}).get("least_shared") if result["status"] == "ok" else None)
        if shared is not None and shared < SHARED_ENOUGH:
            say(f"{self.label}: note: a rated run had every other copy running beside it for only {shared:.0%} of "
                "its time: its own figure was partly taken with the GPU not shared by all copies (start-up "
                "differs between copies); give each run more work than its start-up")
        if result["app"]["left_running"]:
            say(f"{self.label}: the runs left {result['app']['left_running']} process(es) running after them; the "
                "farmer ended them after each window, so they did not run into the next one")
        context = app_context(self.app, self.job, self.config, result, self.s.record.argv)
        try:
            merge.write_atomic(record["part_file"], merge.part_document(context, [result]))
        except (safe_files.UnsafePath, OSError) as e:
            say(f"error: cannot write {record['part_file']}: {e}")

    def judge(self):
        """A failed configuration does not stop the sweep: its record says why (exit status 1 at the end)."""

    def wait(self):
        """Drives the farmers through the configuration; raises Stop on an MPS state contradiction."""
        self.deadline = time.monotonic() + self.s.timeout
        self.channel.send(json.dumps(self.spec()))
        probed = self._step("probed", min(self._left(), SETUP_TIMEOUT_S))
        if probed is None:
            return
        self.config.probed = probed
        problems = [p for e in probed for s in e["states"]
                    if (p := state_problem(self.job.mode, self.job.thread_percentage, s))]
        if problems:
            self.config.fail(f"{probed[0]['host']}: {problems[0]}")
            raise Stop(EXIT_FAILED, f"{self.label}: the copies' MPS state is not what the mode needs: {problems[0]}")
        if self.app.warmup:
            self.channel.send("warmup")
            warm = self._step("warm", self._left())
            if warm is None:
                return
            self.config.warm = warm
            if self._runs_failed(warm):
                return
        for repetition in range(self.app.repetitions):
            self.channel.send(f"window {repetition}")
            windows = self._step("window", self._left())
            if windows is None:
                return
            self.config.windows.append(windows)
            if self._runs_failed(windows):
                return
        self.channel.send("end")
        self.channel.close_input()
        if len(self.channel.wait_for("done", self.nodes, 10.0)) == self.nodes:
            self.channel.wait_exit(5.0)

    def _left(self):
        return max(0.0, self.deadline - time.monotonic())

    def _step(self, kind, timeout):
        """Waits for every node's `kind` event, in node order; None when the configuration failed."""
        events = self.channel.wait_for(kind, self.nodes, timeout, abort_on=("failed",))
        failed = self.channel.seen("failed")
        if failed:
            self.config.fail("; ".join(f"{e['host']}: {e['error']}" for e in failed))
            return None
        if len(events) < self.nodes:
            if self.channel.ended:
                self.config.fail(f"{self.nodes - len(events)} farmer(s) ended without reporting ({kind})")
            else:
                self.config.fail(f"still running after --timeout {self.s.timeout:g} s: the copies were stopped")
            return None
        self.channel.forget(kind)
        if not self.hosts:
            self.hosts = [e["host"] for e in events]
        order = {h: i for i, h in enumerate(self.hosts)}
        return sorted(events, key=lambda e: order.get(e["host"], len(order)))

    def _runs_failed(self, events):
        """Fails the configuration at the first run that failed, else at the first whose figure the farmer
        could not take (figure_error, checked where it was read: metric.py); True when it did."""
        for event in events:
            for run in event["runs"]:
                if run["exit_code"] != 0 and not run["stopped"]:
                    tail = run.get("stderr_tail", "").strip().splitlines()
                    self.config.fail(printable(describe_run(run, event["host"])
                                               + (f"; stderr ends: {tail[-1][:200]}" if tail else "")))
                    return True
        for event in events:
            for run in event["runs"]:
                if run.get("figure_error"):
                    self.config.fail(printable(f"{self.app.metric.described()}: {run_place(run, event['host'])}: "
                                               f"{run['figure_error']} ({run['stdout']})"))
                    return True
        return False


def farmer_command(launcher, nodes, mpi_app):
    """The farmer(s): one per node for separate copies, one here for an MPI application."""
    helper = helper_command("mpsbench_sweep.app.farm")
    if mpi_app or nodes == 1:
        return launcher.node_command(helper, 1, pythonpath=False), 1
    return launcher.node_command(helper, nodes, pythonpath=False), nodes


def run_dir_for(workdir, job):
    return os.path.join(workdir, "app-runs", job.part_name[len("part-"):-len(".json")])
