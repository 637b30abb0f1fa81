"""The sweep's side of the MPS daemons: checks before the first MPS mode, one daemon per stretch of MPS jobs.

Before any job: another user's MPS processes here (refuse, or go on and record them), a daemon this
sweep did not start (refuse, or use it and never stop it). For each stretch of consecutive jobs of one
MPS mode in one round (the runner's; an application's modes alternate at each k, so one per k) a
fresh daemon on every node, held by a guardian (guardian.py) the sweep reaches through one launcher
process; stopped through the guardian after the stretch, before any other job runs, then checked gone
on this node: no process carries its pipe directory, the directory is removed. Signals are held while
a guardian starts, so the cleanup always knows it. Everything is recorded (context.sweep.daemons, each
with the round its stretch began in; existing_daemon, other_mps_users).
"""
import os
import secrets
import shlex
import shutil
import sys
import tempfile
import time

from mpsbench_core import modes as registry

from .. import procs
from ..jobs.outcome import EXIT_FAILED, EXIT_INPUT, Stop
from ..jobs.session import helper_env
from ..text import say
from . import node_checks
from .guardian import Guardian
from .mps_daemon import DEFAULT_PIPE_DIR, DaemonError, answers, describe_foreign, find_foreign


class DaemonLifecycle:
    def __init__(self, settings, launcher, nodes, workdir, signals):
        self.s, self.launcher, self.nodes, self.workdir, self.signals = settings, launcher, nodes, workdir, signals
        self.daemons = []          # context.sweep.daemons
        self.existing = None       # context.sweep.existing_daemon
        self.other_users = None    # context.sweep.other_mps_users
        self.guardian = None
        self.guardian_record = None

    def check_node(self, modes):
        if not self.s.check_node:
            return
        if any(m in registry.MPS_MODES for m in modes):
            self._check_other_users()
        self._check_existing(modes)

    def _check_other_users(self):
        """Another user's MPS server or daemon here (or a server with another user's clients): one line on what
        that does to the timings, then refuse (default) or go on and record it. On the sweep's node only."""
        reason = node_checks.container_hint()
        if reason:
            say(node_checks.container_line(reason))
        pipes = [os.environ.get("CUDA_MPS_PIPE_DIRECTORY"), DEFAULT_PIPE_DIR] + [f["pipe_dir"] for f in find_foreign()]
        found = node_checks.other_mps_users(self.s.control, pipes)
        self.other_users = {"found": found, "policy": self.s.other_mps_users}
        if not found:
            return
        what = node_checks.describe_others(found)
        if self.s.other_mps_users == "refuse":
            raise Stop(EXIT_INPUT, f"another user's MPS processes run here ({what}): {node_checks.OTHER_USERS_EFFECT}; "
                                   "pass --other-mps-users go-on to measure anyway")
        say(f"note: another user's MPS processes run here ({what}): timings may include the wait for their server "
            "(--other-mps-users go-on; recorded as context.sweep.other_mps_users)")

    def _check_existing(self, modes):
        """A daemon we did not start: refuse (default) or use it; never stop or kill it."""
        # Told to go on despite other users' MPS processes: they do not count as a daemon to refuse here.
        found = find_foreign(other_users=self.s.other_mps_users != "go-on")
        answering = None
        if self.s.control:
            candidates = [os.environ.get("CUDA_MPS_PIPE_DIRECTORY"), DEFAULT_PIPE_DIR] + [f["pipe_dir"] for f in found]
            answering = next((d for d in dict.fromkeys(c for c in candidates if c)
                              if answers(self.s.control, d, timeout=5.0)), None)
        if not found and answering is None:
            return
        what = describe_foreign(found) if found else f"a daemon answering at {answering}"
        if self.s.existing_daemon == "refuse":
            raise Stop(EXIT_INPUT, f"an MPS control daemon not started by this sweep is running: {what}; it is left "
                                   f"alone. Stop it yourself (echo quit | CUDA_MPS_PIPE_DIRECTORY=DIR "
                                   f"nvidia-cuda-mps-control) or pass --existing-daemon use")
        self.existing = {"processes": found, "pipe_dir": answering, "used": False}
        if not any(m in registry.MPS_MODES for m in modes):
            say(f"note: {what} is running; no MPS mode requested, so it is not used")
            return
        if answering is None:
            raise Stop(EXIT_INPUT, f"--existing-daemon use: {what} does not answer get_server_list, so it cannot "
                                   "be used")
        self.existing["used"] = True
        say(f"using an MPS daemon not started by this sweep: {what}, pipe directory {answering}; "
            "it will be left running")

    def start(self, mode, round_index=0):
        """The daemon record for a stretch of mode's jobs (its first in round round_index): the existing
        daemon's, or a new one on every node."""
        earlier = sum(d["mode"] == mode for d in self.daemons)
        if self.existing and self.existing["used"]:
            record = {"mode": mode, "round": round_index, "started_by_sweep": False,
                      "pipe_dir": self.existing["pipe_dir"], "log_dir": None}
            self.daemons.append(record)
            if not answers(self.s.control, record["pipe_dir"]):
                raise Stop(EXIT_FAILED, f"{mode}: the MPS daemon at {record['pipe_dir']} no longer answers")
            return record
        # Unpredictable, and created exclusively with mode 0700 by the guardian (Daemon.start), which
        # refuses a name that exists already, a planted link included.
        base = os.path.join(tempfile.gettempdir(), f"mpsb-{os.getpid()}-{secrets.token_hex(8)}")
        if len(base) > 48:  # the daemon puts UNIX sockets inside: paths are limited to 107 bytes
            base = f"/tmp/mpsb-{os.getpid()}-{secrets.token_hex(8)}"
        # One directory per daemon: mps-logs-MODE for a mode's first, then mps-logs-MODE-2, -3, ... (a later
        # copy into the same directory would overwrite the first daemon's logs).
        logs = os.path.join(self.workdir, f"mps-logs-{mode}" + (f"-{earlier + 1}" if earlier else ""))
        helper = [sys.executable, "-m", "mpsbench_sweep.daemon.guardian", "serve", "--base-dir", base,
                  "--control", self.s.control, "--log-copy-dir", logs,
                  "--ready-timeout", str(self.s.ready_timeout), "--quit-timeout", str(self.s.quit_timeout),
                  "--grace", str(self.s.grace), "--sweep-base", base, "--refuse-existing"]
        if self.s.other_mps_users == "go-on":
            helper.append("--allow-other-users")
        command = self.launcher.node_command(helper, self.nodes)
        record = {"mode": mode, "round": round_index, "started_by_sweep": True, "pipe_dir": os.path.join(base, "pipe"),
                  "log_dir": os.path.join(base, "log"), "base_dir": base, "command": shlex.join(command),
                  "hosts": [], "stop": None, "verified_gone": None}
        self.daemons.append(record)
        say(f"{mode}: starting the MPS control daemon on {self.nodes} node(s), pipe directory {record['pipe_dir']}")
        started = time.monotonic()
        guardian = Guardian(command, helper_env(os.environ), self.nodes)
        with self.signals.deferred():
            guardian.launch()
            self.guardian, self.guardian_record = guardian, record
        try:
            guardian.wait_ready(self.s.ready_timeout + 30)
        except DaemonError as e:
            raise Stop(EXIT_FAILED, f"{mode}: the MPS control daemon did not start: {e}") from None
        record["hosts"] = [e["host"] for e in guardian.ready]
        record["start_s"] = round(time.monotonic() - started, 3)
        return record

    def stop(self):
        """Stops our daemon through its guardian(s), then checks here that nothing of it is left; returns the
        problems (none: it is gone)."""
        guardian, record = self.guardian, self.guardian_record
        if guardian is None:
            return []
        started = time.monotonic()
        reports = guardian.stop(self.s.quit_timeout + self.s.grace + 20)
        self.guardian = None
        record["stop"] = reports
        problems = [f"{r['host']}: processes survived SIGKILL: {r['survivors']}" for r in reports if r["survivors"]]
        problems += [f"{r['host']}: directory {r['pipe_dir']} not removed" for r in reports if not r["dirs_removed"]]
        if len(reports) < self.nodes:
            problems.append(f"stop reports from {len(reports)} of {self.nodes} node(s)")
        for r in reports:
            if r["killed"] or r["terminated"]:
                say(f"{record['mode']}: the MPS daemon on {r['host']} did not exit after quit: "
                    f"{len(r['terminated'])} process(es) terminated, {len(r['killed'])} killed")
        # Independent check on this node: nothing carries our pipe directory, the directory is gone.
        left = lambda: procs.with_descendants(procs.carrying_pipe_dir(record["pipe_dir"]))  # noqa: E731
        if left():
            _, _, survivors = procs.terminate(left)
            problems.append(f"{len(left()) + len(survivors)} process(es) of our daemon were still running here")
        if os.path.lexists(record["base_dir"]):
            shutil.rmtree(record["base_dir"], ignore_errors=True)
            problems.append(f"{record['base_dir']} was still there")
        record["verified_gone"] = not problems
        record["stop_s"] = round(time.monotonic() - started, 3)
        if not problems:
            exited = all(r["exited_after_quit"] for r in reports)
            say(f"{record['mode']}: MPS daemon stopped ({'exited after quit' if exited else 'killed'}); no process "
                "or directory of it is left")
        for p in problems:
            say(f"{record['mode']}: {p}")
        return problems
