"""An mpsbench MPI job seen from the sweep: its output, its end, and what its exit status means.

The job runs under a keeper (session.py) through the launcher, writes its results to its part file
and its output to the terminal and to its log (Tee). Its exit status decides (outcome.py): 0 and 1
with a part file are results (1: one failed verification, the sweep goes on); 2 is mpsbench refusing
its input before any work (the sweep stops with 2), unless the line says a rank's MPS state was wrong
(the sharing set-up failed: 3); anything else is a crash (3).
"""
import collections
import os
import re
import subprocess
import sys
import threading

from .. import merge, safe_files
from ..text import printable, say
from .environment import IN_SWEEP_VAR
from .outcome import EXIT_FAILED, EXIT_INPUT, Stop
from .protocol import JobRun
from .session import end_session, kept

MPS_STATE_MISMATCH = re.compile(r"an MPS client|CUDA_MPS_ACTIVE_THREAD_PERCENTAGE")
RANK_FIELDS = ("rank", "host", "gpu_index", "mps_enabled", "mps_active_thread_percentage", "context_memory_bytes",
               "mps_pinned_mem_limit_bytes")


class Tee:
    """Copies a job's stdout and stderr to ours and to its log; keeps its `mpsbench: error/fatal` lines and the
    last lines of its stderr (`tail`: what a job that died without such a line said last)."""

    def __init__(self, proc, log, prefix=""):
        self.log = log
        self.prefix = prefix  # on our terminal only: the jobs of a group of turns write at once
        self.lock = threading.Lock()
        self.errors = []
        self.tail = collections.deque(maxlen=5)
        self.threads = [threading.Thread(target=self._pump, args=(stream, out), daemon=True)
                        for stream, out in ((proc.stdout, sys.stdout), (proc.stderr, sys.stderr))]
        for t in self.threads:
            t.start()

    def _pump(self, stream, out):
        for raw in iter(stream.readline, b""):
            line = raw.decode(errors="replace")
            with self.lock:
                try:
                    out.write(self.prefix + line)
                    out.flush()
                    self.log.write(line)
                except (OSError, ValueError):
                    pass  # a full disk or a closed terminal must not stop us reading (the job would block)
                if line.startswith(("mpsbench: error:", "mpsbench: fatal:")):
                    self.errors.append(printable(line.strip()))
                if out is sys.stderr and line.strip():
                    self.tail.append(printable(line.strip()[:500]))

    def close(self, timeout=5.0):
        for t in self.threads:
            t.join(timeout)  # a stray process still holding the pipe must not block us
        with self.lock:
            try:
                self.log.close()
            except OSError:
                pass
        return self.errors[0] if self.errors else None


def judge(label, record, doc, timed_out, timeout):
    """Sets record["status"]; raises Stop when the sweep must stop."""
    rc, line = record["exit_code"], record["error"]
    if timed_out:
        record["status"] = "timeout"
        raise Stop(EXIT_FAILED, f"{label}: still running after --timeout {timeout:g} s; the job was killed")
    current = doc is not None and doc.get("schema_version") == merge.SCHEMA_VERSION
    if rc in (0, 1) and current:
        verified = all(r.get("verified") for r in doc.get("results", []))
        record["status"] = "ok" if rc == 0 and verified else "verification_failed"
        if record["status"] != "ok":
            say(f"{label}: a result failed verification (continuing)")
        return
    if rc == 2:
        line = line or "(no mpsbench: error line)"
        if MPS_STATE_MISMATCH.search(line):
            record["status"] = "failed"
            raise Stop(EXIT_FAILED, f"{label}: the ranks' MPS state is not what the mode needs: {line}")
        record["status"] = "rejected"
        raise Stop(EXIT_INPUT, f"{label}: mpsbench rejected the job before any work: {line}")
    record["status"] = "failed"
    why = f"was killed by signal {-rc}" if rc is not None and rc < 0 else f"exited with status {rc}"
    if rc in (0, 1):
        why += " but left no results file" if doc is None else " but its results file is not schema version " \
            f"{merge.SCHEMA_VERSION} (an mpsbench of another version?)"
    raise Stop(EXIT_FAILED, f"{label}: the job {why}{': ' + line if line else ''}; stopping the sweep "
                            "(a crashed job usually crashes again; results so far are kept)")


class MpsbenchRun(JobRun):
    """One mpsbench job: mpirun (or srun, or a template) of mpsbench in the job's mode."""

    def __init__(self, job, record, settings, daemon):
        super().__init__(job, record, settings, daemon)
        self.part = record["part_file"]
        self.tee = None
        self.timed_out = False
        self.tail = []
        self.doc = None
        self.turns = None  # the socket of its turns, when it runs in a group (jobs/protocol.py)
        self.group_size = 1

    def command(self):
        # The sweep's own options last: mpsbench takes the later flag, also over a preset's (passthrough.py).
        argv = [self.s.mpsbench] + list(self.s.passthrough) + self.job.mpsbench_args(self.part, self.turns)
        return self.s.launcher.job_command(argv, self.job.np, self.s.nodes, self.environment.env,
                                           export=(IN_SWEEP_VAR,))

    def launch(self):
        try:
            log = safe_files.open_log(self.part[:-len(".json")] + ".log")
        except (safe_files.UnsafePath, OSError) as e:
            raise Stop(EXIT_FAILED, f"{self.label}: cannot write the job's log: {e}") from None
        if os.path.lexists(self.part):
            os.unlink(self.part)  # a stale part must not pass for this job's results
        env = self.environment.env
        self.proc = subprocess.Popen(kept(self.command()), env=env, stdin=subprocess.DEVNULL,
                                     stdout=subprocess.PIPE, stderr=subprocess.PIPE, start_new_session=True)
        self.tee = Tee(self.proc, log, f"[{self.job.setting_label()}] " if self.turns else "")

    def wait(self):
        # In a group the job also waits while the others work: its deadline grows with the group.
        try:
            self.proc.wait(timeout=self.s.timeout * self.group_size if self.s.timeout else None)
        except subprocess.TimeoutExpired:
            self.timed_out = True

    def end(self):
        if self.proc is not None:
            end_session(self.proc)

    def collect(self, interrupted):
        self.record["exit_code"] = self.proc.returncode if self.proc else None
        self.record["error"] = self.tee.close() if self.tee else None
        self.tail = list(self.tee.tail) if self.tee else []
        self.doc = merge.load_part(self.part)
        if self.doc is not None:
            self.record["ranks"] = [{k: r.get(k) for k in RANK_FIELDS} for r in self.doc["context"].get("ranks", [])]

    def judge(self):
        judge(self.label, self.record, self.doc, self.timed_out, self.s.timeout * self.group_size)
