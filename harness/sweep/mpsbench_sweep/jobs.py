"""One MPI job seen from the sweep: its output, its end, and what its exit status means.

Exit statuses of the sweep (cli's --help repeats them):
- 0: every job ran and every result verified; 1: a result failed verification
  (the sweep goes on to the next mode);
- 2: bad input: the job rejected it (exit 2, one `mpsbench: error:` line, nothing
  measured), the sweep stops and shows the line;
- 3: a job failed: crashed (any other status, e.g. 134 after MPI_Abort), passed
  --timeout, or exited 2 because a rank's MPS state was wrong (not an MPS
  client, no thread percentage): that is the sharing set-up failing, not the
  user's input. The sweep stops rather than going on with the next mode: a
  crashed rank usually crashes again, a crash can leave the MPS server in a
  fault state, and every result so far is kept in the merged file anyway;
- 128 + signal: interrupted (130 SIGINT, 143 SIGTERM, 129 SIGHUP).
Jobs run in a session of their own (start_new_session), so a terminal's Ctrl-C
reaches only the sweep, which then ends the whole session itself: SIGTERM to
its process group (mpirun passes it to the ranks), SIGKILL after 10 s, then any
process left in the session.
"""
import collections
import os
import re
import signal
import subprocess
import sys
import threading

from . import procs

EXIT_OK, EXIT_VERIFY, EXIT_INPUT, EXIT_FAILED = 0, 1, 2, 3
MPS_STATE_MISMATCH = re.compile(r"an MPS client|CUDA_MPS_ACTIVE_THREAD_PERCENTAGE")


class Interrupted(BaseException):
    """A signal: a BaseException, so no `except Exception` can swallow it."""

    def __init__(self, signum):
        super().__init__(signum)
        self.signum = signum


class Stop(Exception):
    def __init__(self, code, message):
        super().__init__(message)
        self.code, self.message = code, message


def say(message):
    print(f"mpsbench-sweep: {message}", file=sys.stderr, flush=True)


class Tee:
    """Copies a job's stdout and stderr to ours and to its log; keeps its `mpsbench: error/fatal` lines and the
    last lines of its stderr (`tail`: what a job that died without such a line said last)."""

    def __init__(self, proc, log):
        self.log = log
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
                out.write(line)
                out.flush()
                self.log.write(line)
                if line.startswith(("mpsbench: error:", "mpsbench: fatal:")):
                    self.errors.append(line.strip())
                if out is sys.stderr and line.strip():
                    self.tail.append(line.strip()[:500])

    def close(self, timeout=5.0):
        for t in self.threads:
            t.join(timeout)  # a stray process still holding the pipe must not block us
        with self.lock:
            self.log.close()
        return self.errors[0] if self.errors else None


def judge(label, record, doc, timed_out, timeout):
    """Sets record["status"]; raises Stop when the sweep must stop."""
    rc, line = record["exit_code"], record["error"]
    if timed_out:
        record["status"] = "timeout"
        raise Stop(EXIT_FAILED, f"{label}: still running after --timeout {timeout:g} s; the job was killed")
    if rc in (0, 1) and doc is not None:
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
        why += " but left no results file"
    raise Stop(EXIT_FAILED, f"{label}: the job {why}{': ' + line if line else ''}; stopping the sweep "
                            "(a crashed job usually crashes again; results so far are kept)")


def end_session(proc):
    """Ends a job's session: SIGTERM to its process group, SIGKILL after 10 s, then any process left."""
    if proc.poll() is None:
        for sig, wait in ((signal.SIGTERM, 10), (signal.SIGKILL, 10)):
            try:
                os.killpg(proc.pid, sig)
            except (ProcessLookupError, PermissionError):
                pass
            try:
                proc.wait(timeout=wait)
                break
            except subprocess.TimeoutExpired:
                continue
    members = lambda: procs.session_members(proc.pid)  # noqa: E731
    if members():
        terminated, _, survivors = procs.terminate(members, 3.0, 3.0)
        say(f"ended {len(terminated)} left-over process(es) of the job"
            + (f"; {len(survivors)} survived SIGKILL" if survivors else ""))
