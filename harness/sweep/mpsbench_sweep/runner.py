"""Runs the plan: its jobs in plan order (round after round), one by one or a turn group's at once
(jobs/protocol.py, turns.py), the MPS daemon each stretch of MPS jobs needs, the merged file after each
job (or group).

A daemon is started before a stretch of consecutive jobs of one MPS mode in one round (or a turn group
holding such a job) and stopped, and verified gone, after it, before any other job runs: each MPS mode
gets a fresh one (as a sweep without rounds always had), and so does each round (the last mode of a
round is often the first of the next: its two rounds still get processes of their own, the MPS server
included). One job at a time, a non-MPS job never runs beside our daemon; in a turn group the non-MPS
jobs do, with an empty pipe directory of their own (jobs/environment.py), which no daemon serves. With
rounds the modes alternate, so a mode has several stretches; a start and a stop take a fraction of a
second.

Every exit (normal end, a job's error or crash, --timeout, SIGINT/SIGTERM/SIGHUP) goes through the same
cleanup: the running job is ended (its keeper, its session, everything below it), our MPS daemon is quit
(or killed) through its guardian and verified gone on this node, the private directories are removed,
and the merged file is rewritten with what finished. Exit statuses: jobs/outcome.py; a signal during the
cleanup makes the status 128 + signal, one after the last write changes nothing (signals.py). The settings
are never changed: the client ramp's new plan replaces self.plan (plan.Plan), recorded in the sweep object.
"""
import os
import signal
import time

from mpsbench_core import modes as registry

from . import merge, safe_files, time_profile
from .app.job import AppRun
from .console_report import console_report, memory_summary
from .daemon.lifecycle import DaemonLifecycle
from .jobs.mpsbench_job import MpsbenchRun
from .jobs.outcome import EXIT_FAILED, EXIT_OK, EXIT_VERIFY, Interrupted, Stop
from .jobs.protocol import drive, job_record
from .jobs.ramp import RampState, RampStepRun, table as ramp_table
from .plan import Plan
from .signals import SignalGuard
from .text import say

FINISHED = ("ok", "verification_failed", "run_failed")  # a failed application configuration is finished too


class Runner:
    def __init__(self, settings, started=None):
        """started: time.monotonic() when the sweep started (the profile's total counts from there)."""
        self.s = settings
        self.plan = Plan(settings.jobs, settings.record)
        self.records = self._records()
        self.signals = SignalGuard()
        self.daemons = DaemonLifecycle(settings.daemon, settings.launcher, settings.nodes, settings.workdir,
                                       self.signals)
        self.ramp = RampState(settings.ramp) if settings.ramp is not None else None
        self.current = None        # the JobRuns in progress (one, or a turn group's): what the cleanup ends
        self.app_baselines = {}    # (mode, binding, round) -> one copy per GPU's figure: an app's speedup baseline
        self.last_doc = None
        self.write_error = None
        self.started = started if started is not None else time.monotonic()
        self.parts = {}            # job index -> (the part file's identity, its relabelled document): read once
        self.merges = {}           # job index -> seconds its merge took
        self.profile = None        # context.sweep.time_profile, once the jobs are done

    def _records(self):
        return [job_record(job, self.s.workdir, self.s.mem_device_ordinals) for job in self.plan.jobs]

    def run(self):
        with self.signals.installed():
            try:
                stop = self._jobs()
            finally:  # an unexpected error too: what the sweep started is ended
                self.signals.cleaning = True
                problems = self._cleanup()
            code = stop.code if stop is not None else EXIT_OK
            if problems and code in (EXIT_OK, EXIT_VERIFY):
                code = EXIT_FAILED
            if code == EXIT_OK and any(r["status"] in ("verification_failed", "run_failed") for r in self.records):
                code = EXIT_VERIFY
            self.profile = self._profile()
            code = self.signals.settle(code, self._last_merge)
            self._report(code)
            return code

    def _jobs(self):
        """Runs the jobs; returns the Stop that ended them early, or None. Returns with the guard cleaning up, so
        a signal from then on is noted, never raised; an Interrupted raised until then is caught here (the guard
        holds its signal, which sets the exit status)."""
        stop = None
        try:
            try:
                self._run_jobs()
            except Stop as e:
                stop = e
                say(f"error: {e.message}")
            finally:
                self.signals.cleaning = True  # an attribute, not a call: no handler can run before it
        except Interrupted as e:
            say(f"interrupted by {signal.Signals(e.signum).name}: stopping the job and the MPS daemon")
        return stop

    def _last_merge(self, code):
        """The merged file written for the last time with the exit status code; the status as it then stands (a
        file that could not be written fails a sweep that would have passed)."""
        self._merge(exit_code=code, final=True)
        if self.write_error and code in (EXIT_OK, EXIT_VERIFY):
            code = EXIT_FAILED
        return code

    def _run_jobs(self):
        self.daemons.check_node(self.s.modes)
        daemon = None
        i = 0
        while i < len(self.plan.jobs):  # by index: the client ramp may replace the plan at its daemon's start
            group = self._group(i)
            mps = next((j for j in group if j.mode in registry.MPS_MODES), None)
            if daemon is not None and (mps is None or (daemon["mode"], daemon["round"]) != (mps.mode, mps.round)):
                self._stop_daemon(daemon["mode"])
                daemon = None
            if daemon is None and mps is not None:
                daemon = self.daemons.start(mps.mode, mps.round)
                self._replan(daemon)
                group = self._group(i)
            total = len(self.plan.jobs)
            # one job, or a round's modes at once taking turns (turns.py): the daemon serves its MPS mode alone
            runs = [self._job_run(j, daemon if j.mode in registry.MPS_MODES else None) for j in group]
            drive(runs, total, self.signals, self._set_current, self._merge)
            i += len(group)
        if daemon is not None:
            self._stop_daemon(daemon["mode"])

    def _group(self, i):
        """The jobs that run together from plan index i: its turn group (plan.with_turns), or the job alone."""
        first = self.plan.jobs[i]
        if first.turn_group is None:
            return [first]
        return [j for j in self.plan.jobs[i:] if j.turn_group == first.turn_group]

    def _replan(self, daemon):
        """The client ramp, told the client limit by the daemon, may plan other steps (before any job ran)."""
        if self.ramp is None or not self.s.daemon.control:
            return
        plan = self.ramp.replan(self.plan, self.s.daemon.control, daemon, self.s.nodes, self.s.gpus_per_node)
        if plan is not self.plan:
            self.plan = plan
            self.records = self._records()

    def _stop_daemon(self, mode):
        """Our daemon of the stretch that ended, stopped and verified gone (nothing to do for a daemon found
        running, which is never stopped)."""
        if self.daemons.guardian is None:
            return
        with self.signals.deferred():
            problems = self.daemons.stop()
        if problems:
            raise Stop(EXIT_FAILED, f"{mode}: the MPS daemon was not cleanly removed: " + "; ".join(problems))

    def _job_run(self, job, daemon):
        record = self.records[job.index]
        if job.app:
            return AppRun(job, record, self.s, daemon, self.app_baselines)
        if job.ramp:
            return RampStepRun(job, record, self.s, daemon, self.ramp, self._merge)
        return MpsbenchRun(job, record, self.s, daemon)

    def _set_current(self, runs):
        self.current = runs

    def _cleanup(self):
        current, self.current = self.current, None
        runs = current or []
        for run in runs:  # the one job, or a turn group's
            run.end()
            run.close()
        codes = {id(run.record): run.proc.returncode if run.proc is not None else None for run in runs}
        for record in self.records:
            if record["status"] == "running":  # interrupted before its output was even read
                record["status"] = "interrupted"
                record["exit_code"] = codes.get(id(record))
        return self.daemons.stop()

    # --- output ----------------------------------------------------------------------------------
    def _sweep_object(self, exit_code):
        sweep = self.plan.record.to_json()
        sweep.update({"existing_daemon": self.daemons.existing, "daemons": self.daemons.daemons,
                      "jobs": self.records, "exit_code": exit_code})
        if self.daemons.other_users is not None:
            sweep["other_mps_users"] = self.daemons.other_users
        if self.ramp is not None:
            sweep["client_ramp"] = self.ramp.record
        if self.profile is not None:
            sweep["time_profile"] = self.profile
        return sweep

    def _part(self, job, r):
        """The job's part file as merged (relabelled), read again only when the file changed since."""
        try:
            st = os.stat(r["part_file"])
        except OSError:
            self.parts.pop(job.index, None)
            return None
        key = (st.st_ino, st.st_size, st.st_mtime_ns)
        cached = self.parts.get(job.index)
        if cached is None or cached[0] != key:
            doc = merge.load_part(r["part_file"])
            if doc is not None and doc.get("schema_version") == merge.SCHEMA_VERSION:
                doc = merge.relabel(doc, job)
            else:
                doc = None
            cached = self.parts[job.index] = (key, doc)
        return cached[1]

    def _merge(self, exit_code=None, final=False):
        started = time.monotonic()
        parts = []
        for job, r in zip(self.plan.jobs, self.records):
            doc = self._part(job, r) if r["status"] != "not_run" else None
            if doc is None:
                continue
            if r.get("expected_failure"):
                doc = dict(doc, complete=True)  # the ramp's step past the limit ended as it was meant to
            parts.append(doc)
        done = all(r["status"] in FINISHED or r.get("expected_failure") for r in self.records)
        sweep = self._sweep_object(exit_code)
        doc = merge.merge(parts, sweep, done)
        try:
            merge.write_atomic(os.path.join(self.s.workdir, "sweep.json"), sweep)
            if doc is not None:
                merge.write_atomic(self.s.output, doc)
        except (safe_files.UnsafePath, OSError) as e:
            # Checked before the first job; something was put there since. Go on: the parts are kept.
            if self.write_error is None:
                say(f"error: cannot write the results: {e}")
            self.write_error = str(e)
        if doc is not None:
            self.last_doc = doc
        # The jobs that finished since the last merge: one job, or a turn group's, whose one merge is counted
        # once (on the last of them; the others 0).
        finished = [i for i, r in enumerate(self.records) if r["wall_s"] is not None and i not in self.merges]
        if not final and finished:
            self.merges.update({i: 0.0 for i in finished})
            self.merges[finished[-1]] = round(time.monotonic() - started, 3)
        return doc

    def _profile(self):
        timings = {}
        for job, r in zip(self.plan.jobs, self.records):
            if r.get("timing"):  # a farmed application's windows (app/job.py)
                timings[job.index] = r["timing"]
            elif job.index in self.parts:
                timings[job.index] = time_profile.engine_timing(self.parts[job.index][1])
        return time_profile.profile(self.records, timings, self.merges, self.daemons.daemons,
                                    time.monotonic() - self.started)

    def _timing(self):
        """Each job's wall time (per round, with rounds) and the MPS daemons' start and stop, against the whole
        (one stderr line)."""
        ran = [(job, r) for job, r in zip(self.plan.jobs, self.records) if r["wall_s"] is not None]
        if not ran:
            return ""
        rounds = {}
        for job, r in ran:
            rounds.setdefault(job.round, []).append(f"{job.setting_label()} {r['wall_s']:.0f} s")
        jobs = ("; ".join(f"round {n + 1}: {', '.join(walls)}" for n, walls in rounds.items())
                if self.plan.record.rounds > 1 else ", ".join(rounds[0]))
        by_mode = {}
        for d in self.daemons.daemons:
            if d.get("start_s") is not None:
                by_mode.setdefault(d["mode"], []).append(d)
        daemons = [f"{mode} " + (f"{len(ds)} daemons" if len(ds) > 1 else "daemon")
                   + f" start {sum(d['start_s'] for d in ds):.1f} s"
                   + (f", stop {sum(d['stop_s'] for d in ds if d.get('stop_s') is not None):.1f} s"
                      if any(d.get("stop_s") is not None for d in ds) else "")
                   for mode, ds in by_mode.items()]
        return (f"time: {self.profile['total_s'] if self.profile else time.monotonic() - self.started:.0f} s in "
                f"all; jobs: {jobs}" + (f"; MPS: {'; '.join(daemons)}" if daemons else ""))

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
            memory = memory_summary(doc["context"]["sweep"])
            print(("\n" + memory + "\n" if memory else "") + "\n" + console_report(doc, self.s.gain_threshold),
                  flush=True)
        if self.ramp is not None:
            print("\n" + ramp_table(self.ramp.record) + f"\n(also in {os.path.join(self.s.workdir, 'sweep.json')}, "
                  "client_ramp)", flush=True)
        profile = time_profile.lines(self.profile) if self.profile else []
        if profile:
            print("\n" + "\n".join(profile), flush=True)
