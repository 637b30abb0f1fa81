"""The life cycle of one MPS control daemon owned by the sweep.

Why it is done this way:
- Private directories: the daemon gets its own CUDA_MPS_PIPE_DIRECTORY and
  CUDA_MPS_LOG_DIRECTORY (created 0700 and exclusively), so it can never be
  confused with a daemon someone else runs, and it can be found again through
  /proc/PID/environ even after it double-forked away from us (see procs.py).
- Ready means answering: `nvidia-cuda-mps-control -d` returns before the
  daemon listens, so start() polls `get_server_list` until it exits 0.
- Thread percentage: applied per client through CUDA_MPS_ACTIVE_THREAD_PERCENTAGE
  in each rank's environment (jobs/environment.py), not with
  `set_default_active_thread_percentage`: the client variable needs no server
  restart between jobs, leaves a daemon we did not start (--existing-daemon use)
  unchanged, and is what mpsbench records and verifies per rank.
- Stop: `quit`, then wait until no process carries our pipe directory (the
  daemon, the server it spawned, anything they forked) and every process seen
  before the quit has exited; after a grace period SIGTERM, then SIGKILL, only
  those processes. Then the logs are copied out and the directories removed.
  stop() never raises: it reports, so the caller can go on cleaning up.
"""
import os
import shutil
import socket
import subprocess
import time

from .. import procs

CONTROL_NAME = "nvidia-cuda-mps-control"
SERVER_NAME = "nvidia-cuda-mps-server"
DEFAULT_PIPE_DIR = "/tmp/nvidia-mps"


class DaemonError(Exception):
    """The daemon could not be started or did not answer."""


def control_env(pipe_dir, log_dir=None):
    env = dict(os.environ)
    # Client settings: in the daemon's environment they would become its defaults for every client.
    env.pop("CUDA_MPS_ACTIVE_THREAD_PERCENTAGE", None)
    env.pop("CUDA_MPS_PINNED_DEVICE_MEM_LIMIT", None)
    env["CUDA_MPS_PIPE_DIRECTORY"] = pipe_dir
    if log_dir:
        env["CUDA_MPS_LOG_DIRECTORY"] = log_dir
    else:
        env.pop("CUDA_MPS_LOG_DIRECTORY", None)
    return env


def control(control_path, command, pipe_dir, log_dir=None, timeout=5.0):
    """`echo COMMAND | nvidia-cuda-mps-control` for pipe_dir: (exit code or None on timeout, output)."""
    try:
        r = subprocess.run([control_path], input=command + "\n", env=control_env(pipe_dir, log_dir),
                           capture_output=True, text=True, timeout=timeout)
    except subprocess.TimeoutExpired:
        return None, f"no answer within {timeout:g} s"
    except OSError as e:
        return None, str(e)
    return r.returncode, (r.stdout + r.stderr).strip()


def answers(control_path, pipe_dir, timeout=5.0):
    return control(control_path, "get_server_list", pipe_dir, timeout=timeout)[0] == 0


def mps_kind(argv):
    """'daemon', 'server' or None for a command line (argv[1] too: interpreters running a script)."""
    names = [os.path.basename(a) for a in argv[:2]]
    if SERVER_NAME in names:
        return "server"
    if CONTROL_NAME in names and ("-d" in argv or "-f" in argv):
        return "daemon"
    return None


def find_foreign(own_prefix=None, other_users=True):
    """MPS daemons and servers running here whose pipe directory is not under own_prefix
    (the sweep's unique base name: pid and random hex); other_users=False: only those of our effective UID
    (--other-mps-users go-on: another user's are accounted for by that check).

    pipe_dir is None when the process's environment cannot be read (another
    user, without root)."""
    found = []
    for pid in procs.all_pids():
        if pid == os.getpid():
            continue
        if not other_users and procs.owner(pid) not in (None, os.geteuid()):
            continue
        kind = mps_kind(procs.cmdline(pid))
        s = procs.stat(pid)
        if kind is None or s is None or s[0] in ("Z", "X"):
            continue
        env = procs.environ(pid)
        if procs.of_another_test(env):
            continue
        pipe = None
        if env is not None:
            pipe = os.path.normpath(os.fsdecode(env.get(procs.PIPE_KEY, DEFAULT_PIPE_DIR.encode())))
        if own_prefix and pipe and pipe.startswith(os.path.normpath(own_prefix)):
            continue
        found.append({"pid": pid, "kind": kind, "pipe_dir": pipe})
    found.sort(key=lambda f: (f["kind"] != "daemon", f["pid"]))
    return found


def describe_foreign(found):
    return ", ".join(f"{f['kind']} pid {f['pid']} (pipe directory {f['pipe_dir'] or 'unknown'})" for f in found)


def _not_a_plain_file(path):
    return os.path.islink(path) or not os.path.isfile(path)


class Daemon:
    """One daemon in base_dir/pipe and base_dir/log; base_dir must not exist yet."""

    def __init__(self, control_path, base_dir, log_copy_dir=None):
        self.control_path = control_path
        self.base_dir = os.path.abspath(base_dir)
        self.pipe_dir = os.path.join(self.base_dir, "pipe")
        self.log_dir = os.path.join(self.base_dir, "log")
        self.log_copy_dir = log_copy_dir
        self.created = False

    def start(self, ready_timeout=15.0):
        try:
            os.mkdir(self.base_dir, 0o700)  # exclusive: fails if anything is there
        except OSError as e:
            raise DaemonError(f"cannot create the private MPS directory {self.base_dir}: {e.strerror}") from e
        self.created = True
        os.mkdir(self.pipe_dir, 0o700)
        os.mkdir(self.log_dir, 0o700)
        start_log = os.path.join(self.log_dir, "sweep-start.log")
        try:
            with open(start_log, "wb") as out:  # a file, not a pipe: the daemon may keep it open
                rc = subprocess.run([self.control_path, "-d"], env=control_env(self.pipe_dir, self.log_dir),
                                    stdin=subprocess.DEVNULL, stdout=out, stderr=subprocess.STDOUT,
                                    timeout=30).returncode
        except subprocess.TimeoutExpired as e:
            raise DaemonError(f"`{self.control_path} -d` did not return within 30 s") from e
        except OSError as e:
            raise DaemonError(f"cannot run {self.control_path}: {e.strerror}") from e
        if rc != 0:
            with open(start_log, errors="replace") as f:
                said = " / ".join(line.strip() for line in f if line.strip())[-300:]
            raise DaemonError(f"`{self.control_path} -d` exited with status {rc}" + (f": {said}" if said else ""))
        self.wait_ready(ready_timeout)

    def wait_ready(self, timeout):
        deadline = time.monotonic() + timeout
        while True:
            left = deadline - time.monotonic()
            rc, out = control(self.control_path, "get_server_list", self.pipe_dir, timeout=max(0.5, min(5.0, left)))
            if rc == 0:
                return
            if time.monotonic() >= deadline:
                raise DaemonError(f"the MPS control daemon did not answer get_server_list within {timeout:g} s "
                                  f"(last answer: {out or 'none'})")
            time.sleep(0.1)

    def processes(self):
        """Our daemon, its server and their descendants: whatever carries our pipe directory."""
        return procs.with_descendants(procs.carrying_pipe_dir(self.pipe_dir))

    def stop(self, quit_timeout=10.0, grace=10.0):
        report = {"host": socket.gethostname(), "pipe_dir": self.pipe_dir, "quit": None, "exited_after_quit": None,
                  "terminated": [], "killed": [], "survivors": [], "logs": None, "dirs_removed": False}
        seen = self.processes()  # before quit: the server may be reparented once the daemon exits

        def live():
            return procs.with_descendants({p for p in seen if p.alive()} | set(procs.carrying_pipe_dir(self.pipe_dir)))

        if seen:
            rc, out = control(self.control_path, "quit", self.pipe_dir, self.log_dir, timeout=quit_timeout)
            report["quit"] = {"exit_code": rc, "output": out[-300:]}
            # A refused quit will not be followed by an exit: do not wait the whole grace period.
            left = procs.wait_gone(live, grace if rc == 0 else min(grace, 2.0), poll=0.1)
            report["exited_after_quit"] = not left
            if left:
                report["terminated"], report["killed"], report["survivors"] = procs.terminate(live)
        if self.created:
            report["logs"] = self._copy_logs()
            shutil.rmtree(self.base_dir, ignore_errors=True)
            report["dirs_removed"] = not os.path.lexists(self.base_dir)
        else:
            report["dirs_removed"] = True
        report["ok"] = not report["survivors"] and report["dirs_removed"]
        return report

    def _copy_logs(self):
        if not self.log_copy_dir or not os.path.isdir(self.log_dir):
            return None
        dest = os.path.join(self.log_copy_dir, socket.gethostname())
        try:
            # Regular files only: a link in the log directory must not pull another file into the copy.
            shutil.copytree(self.log_dir, dest, dirs_exist_ok=True, symlinks=True,
                            ignore=lambda d, names: [n for n in names if _not_a_plain_file(os.path.join(d, n))])
        except (OSError, shutil.Error):
            return None
        return dest
