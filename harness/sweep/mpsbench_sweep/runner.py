"""Runs the planned jobs in order with the daemons they need; cleans up on every exit path.

Every exit (normal end, a job's error or crash, --timeout, SIGINT/SIGTERM/SIGHUP)
goes through the same cleanup: the running job's session is ended, our MPS
daemon is quit (or killed) through its guardian and verified gone on this node,
the private directories are removed, and the merged file is rewritten with
what finished. Exit statuses: see jobs.py. Signals arriving while a process is
being started are held until it is recorded (_deferred), so nothing the sweep
starts can escape the cleanup; signals arriving during the cleanup are noted,
not obeyed, so the cleanup always finishes.
"""
import os
import secrets
import shlex
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from contextlib import contextmanager

from . import merge, node_checks, procs, ramp, safe_files
from .jobs import EXIT_FAILED, EXIT_INPUT, EXIT_OK, EXIT_VERIFY, Interrupted, Stop, Tee, end_session, judge, say
from .launcher import MPS_VARS
from .mps_daemon import DEFAULT_PIPE_DIR, DaemonError, answers, control, describe_foreign, find_foreign
from .app_context import app_context
from .app_job import AppJob, farmer_command, part_document, run_dir_for
from .mps_node import Guardian
from .nvsmi import ServerMemoryPoller
from .plan import MPS_MODES, mem_limit_bytes, mem_limit_env, plan_ramp
from .safe_files import UnsafePath

SWEEP_PACKAGE_DIR = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

# Tells mpsbench it runs as a job of this sweep (main.cpp: no "run the comparison" hint).
IN_SWEEP_VAR = "MPSBENCH_IN_SWEEP"


class Runner:
    def __init__(self, settings):
        self.s = settings
        self.records = [self._record(job) for job in settings.jobs]
        self.daemons = []
        self.existing = None
        self.other_users = None
        self.ramp = None
        if settings.ramp is not None:
            self.ramp = {"limit": settings.ramp.limit, "limit_source": settings.ramp.reason,
                         "server_reported_limit": None, "steps": [], "finding": None}
        self._tail = []
        self.signal = None
        self._raised = False
        self._defer = 0
        self.job_proc = None
        self.guardian = None
        self.guardian_record = None
        self.private_dirs = []
        self.last_doc = None
        self.write_error = None
        self._app_one_copy = {}  # mode -> runs/s of one copy per GPU: the speedup baseline
        self.started = time.monotonic()

    def _record(self, job):
        record = {"mode": job.mode, "label": job.label(), "ranks_per_gpu": job.ranks_per_gpu,
                  "thread_percentage": job.thread_percentage, "np": job.np, "command": None, "status": "not_run",
                  "exit_code": None, "error": None, "part_file": os.path.join(self.s.workdir, job.part_name),
                  "daemon": None, "wall_s": None, "ranks": None}
        if job.mem_limit is not None:
            record.update({"mem_limit": job.mem_limit, "mem_limit_bytes": mem_limit_bytes(job.mem_limit),
                           "mem_limit_env": mem_limit_env(job.mem_limit, self.s.mem_device_ordinals)})
        if job.ramp:
            record.update({"client_ramp_step": True, "past_limit": job.past_limit, "expected_failure": False})
        return record

    # --- signals -------------------------------------------------------------------------------
    def _on_signal(self, signum, frame):
        if self.signal is None:
            self.signal = signum
        if self._raised:
            say(f"{signal.Signals(signum).name} received: still cleaning up, please wait")
            return
        if self._defer == 0:
            self._raised = True
            raise Interrupted(signum)

    @contextmanager
    def _deferred(self):
        """Signals arriving inside are raised at its end: a process is never started without being recorded."""
        self._defer += 1
        try:
            yield
        finally:
            self._defer -= 1
        if self._defer == 0 and self.signal is not None and not self._raised:
            self._raised = True
            raise Interrupted(self.signal)

    # --- the sweep -------------------------------------------------------------------------------
    def run(self):
        handled = (signal.SIGINT, signal.SIGTERM, signal.SIGHUP)
        previous = {sig: signal.signal(sig, self._on_signal) for sig in handled}
        code = EXIT_OK
        try:
            try:
                self._check_other_users()
                self._check_existing()
                for mode in dict.fromkeys(j.mode for j in self.s.jobs):
                    daemon = self._start_daemon(mode) if mode in MPS_MODES else None
                    if self.ramp is not None and daemon is not None:
                        self._ramp_limit_from_server(daemon)
                    for job in (j for j in self.s.jobs if j.mode == mode):
                        (self._run_app_job if self.s.app else self._run_job)(job, daemon)
                    if self.guardian is not None:
                        with self._deferred():
                            problems = self._stop_daemon()
                        if problems:
                            raise Stop(EXIT_FAILED, f"{mode}: the MPS daemon was not cleanly removed: "
                                                    + "; ".join(problems))
            except Interrupted as e:
                code = 128 + e.signum
                say(f"interrupted by {signal.Signals(e.signum).name}: stopping the job and the MPS daemon")
            except Stop as e:
                code = e.code
                say(f"error: {e.message}")
            finally:
                self._raised = True  # from here on signals are noted, not raised
                problems = self._cleanup()
            if problems and code in (EXIT_OK, EXIT_VERIFY):
                code = EXIT_FAILED
            if code == EXIT_OK and any(r["status"] in ("verification_failed", "run_failed") for r in self.records):
                code = EXIT_VERIFY
            self._merge(exit_code=code)
            if self.write_error and code in (EXIT_OK, EXIT_VERIFY):
                code = EXIT_FAILED
            self._report(code)
            return code
        finally:
            for sig, handler in previous.items():
                signal.signal(sig, handler)

    def _check_other_users(self):
        """Another user's MPS server or daemon here (or a server with another user's clients): one line on what
        that does to the timings, then refuse (default) or go on and record it. Before MPS modes only; on the
        sweep's node only."""
        if not self.s.check_existing or not any(m in MPS_MODES for m in self.s.modes):
            return
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

    def _ramp_limit_from_server(self, daemon):
        """--client-ramp: the client limit as the daemon reports it, if it does; without --mps-client-limit the
        steps follow it (no job has run yet: the ramp is the only mode)."""
        if not self.s.control:
            return
        rc, out = control(self.s.control, ramp.GET_LIMIT_COMMAND, daemon["pipe_dir"], timeout=5.0)
        reported = ramp.parse_limit(out) if rc == 0 else None
        self.ramp["server_reported_limit"] = reported
        if reported is None or reported == self.ramp["limit"]:
            return
        if self.s.ramp.explicit:
            say(f"client ramp: the MPS daemon reports a client limit of {reported} per GPU; ramping to "
                f"--mps-client-limit {self.ramp['limit']} as asked")
            return
        say(f"client ramp: the MPS daemon reports a client limit of {reported} per GPU (not {self.ramp['limit']}): "
            f"ramping to {reported} and {reported + 1}")
        self.s.jobs = plan_ramp(reported, self.s.ramp.nodes, self.s.ramp.gpus_per_node)
        self.records = [self._record(job) for job in self.s.jobs]
        self.ramp.update(limit=reported, limit_source=f"the daemon's answer to {ramp.GET_LIMIT_COMMAND}")
        self.s.meta.update(mps_client_limit=reported, ranks_per_gpu=[j.ranks_per_gpu[0] for j in self.s.jobs])

    def _check_existing(self):
        """A daemon we did not start: refuse (default) or use it; never stop or kill it."""
        if not self.s.check_existing:
            return
        # Told to go on despite other users' MPS processes: they do not count as a daemon to refuse here.
        found = find_foreign(other_users=self.s.other_mps_users != "go-on")
        answering = None
        if self.s.control:
            candidates = [os.environ.get("CUDA_MPS_PIPE_DIRECTORY"), DEFAULT_PIPE_DIR] + [f["pipe_dir"] for f in found]
            for d in dict.fromkeys(c for c in candidates if c):
                if answers(self.s.control, d, timeout=5.0):
                    answering = d
                    break
        if not found and answering is None:
            return
        what = describe_foreign(found) if found else f"a daemon answering at {answering}"
        if self.s.existing_daemon == "refuse":
            raise Stop(EXIT_INPUT, f"an MPS control daemon not started by this sweep is running: {what}; it is left "
                                   f"alone. Stop it yourself (echo quit | CUDA_MPS_PIPE_DIRECTORY=DIR "
                                   f"nvidia-cuda-mps-control) or pass --existing-daemon use")
        self.existing = {"processes": found, "pipe_dir": answering, "used": False}
        if not any(m in MPS_MODES for m in self.s.modes):
            say(f"note: {what} is running; no MPS mode requested, so it is not used")
            return
        if answering is None:
            raise Stop(EXIT_INPUT, f"--existing-daemon use: {what} does not answer get_server_list, so it cannot "
                                   "be used")
        self.existing["used"] = True
        say(f"using an MPS daemon not started by this sweep: {what}, pipe directory {answering}; "
            "it will be left running")

    def _start_daemon(self, mode):
        if self.existing and self.existing["used"]:
            record = {"mode": mode, "started_by_sweep": False, "pipe_dir": self.existing["pipe_dir"], "log_dir": None}
            self.daemons.append(record)
            if not answers(self.s.control, record["pipe_dir"]):
                raise Stop(EXIT_FAILED, f"{mode}: the MPS daemon at {record['pipe_dir']} no longer answers")
            return record
        # Unpredictable, and created exclusively with mode 0700 by the guardian (Daemon.start), which
        # refuses a name that exists already, a planted link included.
        base = os.path.join(tempfile.gettempdir(), f"mpsb-{os.getpid()}-{secrets.token_hex(8)}")
        if len(base) > 48:  # the daemon puts UNIX sockets inside: paths are limited to 107 bytes
            base = f"/tmp/mpsb-{os.getpid()}-{secrets.token_hex(8)}"
        helper = [sys.executable, "-m", "mpsbench_sweep.mps_node", "serve", "--base-dir", base,
                  "--control", self.s.control, "--log-copy-dir", os.path.join(self.s.workdir, f"mps-logs-{mode}"),
                  "--ready-timeout", str(self.s.ready_timeout), "--quit-timeout", str(self.s.quit_timeout),
                  "--grace", str(self.s.grace), "--sweep-base", base, "--refuse-existing"]
        if self.s.other_mps_users == "go-on":
            helper.append("--allow-other-users")
        command = self.s.launcher.node_command(helper, self.s.nodes)
        env = dict(os.environ)
        env["PYTHONPATH"] = os.pathsep.join(p for p in (SWEEP_PACKAGE_DIR, env.get("PYTHONPATH")) if p)
        record = {"mode": mode, "started_by_sweep": True, "pipe_dir": os.path.join(base, "pipe"),
                  "log_dir": os.path.join(base, "log"), "base_dir": base, "command": shlex.join(command),
                  "hosts": [], "stop": None, "verified_gone": None}
        self.daemons.append(record)
        say(f"{mode}: starting the MPS control daemon on {self.s.nodes} node(s), pipe directory {record['pipe_dir']}")
        started = time.monotonic()
        guardian = Guardian(command, env, self.s.nodes)
        with self._deferred():
            guardian.launch()
            self.guardian, self.guardian_record = guardian, record
        try:
            guardian.wait_ready(self.s.ready_timeout + 30)
        except DaemonError as e:
            raise Stop(EXIT_FAILED, f"{mode}: the MPS control daemon did not start: {e}") from None
        record["hosts"] = [e["host"] for e in guardian.ready]
        record["start_s"] = round(time.monotonic() - started, 3)
        return record

    def _stop_daemon(self):
        """Stops our daemon through its guardian(s), then checks here that nothing of it is left."""
        guardian, record = self.guardian, self.guardian_record
        if guardian is None:
            return []
        started = time.monotonic()
        reports = guardian.stop(self.s.quit_timeout + self.s.grace + 20)
        self.guardian = None
        record["stop"] = reports
        problems = [f"{r['host']}: processes survived SIGKILL: {r['survivors']}" for r in reports if r["survivors"]]
        problems += [f"{r['host']}: directory {r['pipe_dir']} not removed" for r in reports if not r["dirs_removed"]]
        if len(reports) < self.s.nodes:
            problems.append(f"stop reports from {len(reports)} of {self.s.nodes} node(s)")
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

    def _job_env(self, job, daemon):
        env = dict(os.environ)
        for var in MPS_VARS:
            env.pop(var, None)
        # mpsbench's "no MPS daemon: run the comparison" hint is for a user's own
        # mpirun; the sweep's timeslice job is that comparison's first half.
        env[IN_SWEEP_VAR] = "1"
        if daemon is None:
            # A private empty pipe directory: the ranks cannot reach any daemon (MPS_ENABLED=0).
            empty = tempfile.mkdtemp(prefix="mpsb-empty-")
            self.private_dirs.append(empty)
            env["CUDA_MPS_PIPE_DIRECTORY"] = empty
        else:
            env["CUDA_MPS_PIPE_DIRECTORY"] = daemon["pipe_dir"]
            if daemon["log_dir"]:
                env["CUDA_MPS_LOG_DIRECTORY"] = daemon["log_dir"]
            if job.thread_percentage is not None:
                env["CUDA_MPS_ACTIVE_THREAD_PERCENTAGE"] = str(job.thread_percentage)
            if job.mem_limit is not None:
                env["CUDA_MPS_PINNED_DEVICE_MEM_LIMIT"] = mem_limit_env(job.mem_limit, self.s.mem_device_ordinals)
        return env

    def _run_job(self, job, daemon):
        record = self.records[job.index]
        part = record["part_file"]
        try:
            log = safe_files.open_log(part[:-len(".json")] + ".log")
        except (UnsafePath, OSError) as e:
            raise Stop(EXIT_FAILED, f"{job.label()}: cannot write the job's log: {e}") from None
        env = self._job_env(job, daemon)
        argv = [self.s.mpsbench] + job.mpsbench_args(part) + self.s.passthrough
        command = self.s.launcher.job_command(argv, job.np, self.s.nodes, env, export=(IN_SWEEP_VAR,))
        record["command"] = shlex.join(command)
        if os.path.lexists(part):
            os.unlink(part)  # a stale part must not pass for this job's results
        say(f"[{job.index + 1}/{len(self.s.jobs)}] {job.label()}: {record['command']}")
        started = time.monotonic()
        with self._deferred():
            proc = subprocess.Popen(command, env=env, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                                    stderr=subprocess.PIPE, start_new_session=True)
            self.job_proc = proc
            record["status"] = "running"
        tee = poller = None
        timed_out = False
        try:
            tee = Tee(proc, log)
            poller = ServerMemoryPoller().start() if daemon is not None else None
            proc.wait(timeout=self.s.timeout)
        except subprocess.TimeoutExpired:
            timed_out = True
        except Interrupted:
            record["status"] = "interrupted"
            self._finish_job(record, tee, poller, daemon, started)
            raise
        with self._deferred():
            self._finish_job(record, tee, poller, daemon, started)
        try:
            judge(job.label(), record, merge.load_part(part), timed_out, self.s.timeout)
        except Stop:
            if not job.past_limit:
                raise
            # The client ramp's step past the limit: its failure is what the ramp measures, not a sweep error.
            record["expected_failure"] = True
        finally:
            if job.ramp:
                self.ramp["steps"].append(ramp.step(job, record, merge.load_part(part), self._tail, self.s.timeout))
                self.ramp["finding"] = ramp.finding(self.ramp)
                self._merge()
        if record.get("expected_failure"):
            say(f"{job.label()}: {record['status']} one past the MPS client limit, recorded as the ramp's last step: "
                f"{self.ramp['steps'][-1]['error']}")
        say(f"{job.label()}: {record['status']} in {record['wall_s']:.0f} s")

    def _run_app_job(self, job, daemon):
        """One configuration of a farmed application (app_job.py); its part file is written here."""
        record = self.records[job.index]
        env = self.s.app.farmer_env(self._job_env(job, daemon))
        env["PYTHONPATH"] = os.pathsep.join(p for p in (SWEEP_PACKAGE_DIR, env.get("PYTHONPATH")) if p)
        command, nodes = farmer_command(self.s.launcher, self.s.nodes, self.s.app.launcher is not None)
        run = AppJob(self.s, job, env, command, nodes, run_dir_for(self.s.workdir, job))
        record["command"] = shlex.join(run.spec()["argv"])
        say(f"[{job.index + 1}/{len(self.s.jobs)}] {job.label()}: {record['command']}")
        started = time.monotonic()
        poller = None
        with self._deferred():
            self.job_proc = run.launch()
            record["status"] = "running"
        try:
            poller = ServerMemoryPoller().start() if daemon is not None else None
            run.run()
        except Interrupted:
            record["status"] = "interrupted"
            raise
        finally:
            with self._deferred():
                run.finish()
                self.job_proc = None
                self._finish_app_job(record, run, poller, daemon, started)
        say(f"{job.label()}: {record['status']} in {record['wall_s']:.0f} s"
            + (f": {record['error']}" if record["error"] else ""))

    def _finish_app_job(self, record, run, poller, daemon, started):
        record["wall_s"] = round(time.monotonic() - started, 3)
        if daemon is not None:
            record["daemon"] = {"started_by_sweep": daemon["started_by_sweep"], "pipe_dir": daemon["pipe_dir"],
                                "mps_server_memory_bytes": poller.stop() if poller else None}
        if record["status"] == "interrupted":
            run.config.fail("interrupted")
        result = run.config.record(self._app_one_copy.get(run.job.mode))
        if result["status"] == "ok" and run.job.ranks_per_gpu[0] == 1:
            self._app_one_copy.setdefault(run.job.mode, result["aggregate"]["item_per_s"]["median"])
        record["error"] = result["error"]
        record["copy_memory_bytes"] = result["app"]["gpu_memory_bytes"]
        if record["status"] != "interrupted":
            record["status"] = ("run_failed" if result["status"] != "ok" else
                                "ok" if result["verified"] else "verification_failed")
        try:
            merge.write_atomic(record["part_file"], part_document(app_context(self.s, run, result), result))
        except (UnsafePath, OSError) as e:
            say(f"error: cannot write {record['part_file']}: {e}")
        for d in self.private_dirs:
            shutil.rmtree(d, ignore_errors=True)
        self.private_dirs = []
        self._merge()

    def _finish_job(self, record, tee, poller, daemon, started):
        proc = self.job_proc
        self._end_job()
        record["wall_s"] = round(time.monotonic() - started, 3)
        record["exit_code"] = proc.returncode
        record["error"] = tee.close() if tee else None
        self._tail = list(tee.tail) if tee else []
        if daemon is not None:
            record["daemon"] = {"started_by_sweep": daemon["started_by_sweep"], "pipe_dir": daemon["pipe_dir"],
                                "mps_server_memory_bytes": poller.stop() if poller else None}
        doc = merge.load_part(record["part_file"])
        if doc is not None:
            record["ranks"] = [{k: r.get(k) for k in ("rank", "host", "gpu_index", "mps_enabled",
                                                      "mps_active_thread_percentage", "context_memory_bytes",
                                                      "mps_pinned_mem_limit_bytes")}
                               for r in doc["context"].get("ranks", [])]
        for d in self.private_dirs:
            shutil.rmtree(d, ignore_errors=True)
        self.private_dirs = []
        self._merge()

    def _end_job(self):
        proc, self.job_proc = self.job_proc, None
        if proc is not None:
            end_session(proc)

    def _cleanup(self):
        problems = []
        proc = self.job_proc
        self._end_job()
        for record in self.records:
            if record["status"] == "running":  # interrupted before its output was even read
                record["status"], record["exit_code"] = "interrupted", proc.returncode if proc else None
        if self.guardian is not None:
            problems += self._stop_daemon()
        for d in self.private_dirs:
            shutil.rmtree(d, ignore_errors=True)
        self.private_dirs = []
        return problems

    # --- output ----------------------------------------------------------------------------------
    def _sweep_object(self, exit_code):
        sweep = dict(self.s.meta)
        sweep.update({"existing_daemon": self.existing, "daemons": self.daemons, "jobs": self.records,
                      "exit_code": exit_code})
        if self.other_users is not None:
            sweep["other_mps_users"] = self.other_users
        if self.ramp is not None:
            sweep["client_ramp"] = self.ramp
        return sweep

    def _merge(self, exit_code=None):
        parts = []
        for r in self.records:
            doc = merge.load_part(r["part_file"]) if r["status"] != "not_run" else None
            if doc is None:
                continue
            if r["mode"] == "mps-mem":
                doc = merge.relabel_mem(doc, r["mem_limit"])
            if r.get("expected_failure"):
                doc = dict(doc, complete=True)  # the ramp's step past the limit ended as it was meant to
            parts.append(doc)
        # A failed application configuration is finished too: its record says why (exit status 1).
        done = all(r["status"] in ("ok", "verification_failed", "run_failed") or r.get("expected_failure")
                   for r in self.records)
        sweep = self._sweep_object(exit_code)
        doc = merge.merge(parts, sweep, done)
        try:
            merge.write_atomic(os.path.join(self.s.workdir, "sweep.json"), sweep)
            if doc is not None:
                merge.write_atomic(self.s.output, doc)
        except (UnsafePath, OSError) as e:
            # Checked before the first job; something was put there since. Go on: the parts are kept.
            if self.write_error is None:
                say(f"error: cannot write the results: {e}")
            self.write_error = str(e)
        if doc is not None:
            self.last_doc = doc
        return doc

    def _timing(self):
        """Where the time went: each job's wall time and the MPS daemons' start and stop, against the whole."""
        jobs = [f"{r['label']} {r['wall_s']:.0f} s" for r in self.records if r["wall_s"] is not None]
        if not jobs:
            return ""
        daemons = [f"{d['mode']} daemon start {d['start_s']:.1f} s" + (f", stop {d['stop_s']:.1f} s"
                                                                         if d.get("stop_s") is not None else "")
                   for d in self.daemons if d.get("start_s") is not None]
        return (f"time: {time.monotonic() - self.started:.0f} s in all; jobs: {', '.join(jobs)}"
                + (f"; MPS: {'; '.join(daemons)}" if daemons else ""))

    def _report(self, code):
        doc = self.last_doc
        ran = sum(r["status"] != "not_run" for r in self.records)
        if doc is None:
            say(f"no results to keep ({ran} of {len(self.records)} jobs started); job records in "
                f"{os.path.join(self.s.workdir, 'sweep.json')}")
        elif self.write_error:
            say(f"{len(doc['results'])} results from {ran} of {len(self.records)} jobs could not be written to "
                f"{self.s.output}; the jobs' part files are kept in {self.s.workdir}")
        else:
            say(f"{len(doc['results'])} results from {ran} of {len(self.records)} jobs in {self.s.output} "
                f"(complete: {'yes' if doc['complete'] else 'no'}); logs in {self.s.workdir}")
        timing = self._timing()
        if timing:
            say(timing)
        if code in (EXIT_OK, EXIT_VERIFY) and not self.s.keep_parts:
            for r in self.records:
                if os.path.exists(r["part_file"]):
                    os.unlink(r["part_file"])
        if doc is not None:
            memory = merge.memory_summary(doc["context"]["sweep"])
            print(("\n" + memory + "\n" if memory else "") + "\n" + merge.table(doc, self.s.gain_threshold),
                  flush=True)
        if self.ramp is not None:
            print("\n" + ramp.table(self.ramp) + f"\n(also in {os.path.join(self.s.workdir, 'sweep.json')}, "
                  "client_ramp)", flush=True)
