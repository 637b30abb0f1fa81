"""Process discovery through /proc (Linux), standard library only.

The sweep must find the MPS control daemon and the server it spawned without
trusting pids it was told about: both fork away from us (the daemon double
forks, the server is started by the daemon). What they do keep is the
environment they were started with, so a process is identified by the private
CUDA_MPS_PIPE_DIRECTORY the sweep created for it; a (pid, start time) pair
guards against pid reuse. Zombies count as exited: in containers whose init
never reaps, a dead daemon stays a zombie forever and must not block cleanup.
"""
import os
import signal
import time

PIPE_KEY = b"CUDA_MPS_PIPE_DIRECTORY"


def all_pids():
    try:
        names = os.listdir("/proc")
    except OSError:
        return []
    return [int(n) for n in names if n.isdigit()]


def _read(pid, name):
    """The bytes of /proc/PID/NAME, None when the process is gone or denies access."""
    try:
        with open(f"/proc/{pid}/{name}", "rb") as f:
            return f.read()
    except OSError:
        return None


def stat(pid):
    """(state, ppid, session, starttime) or None when the process is gone."""
    data = _read(pid, "stat")
    if data is None:
        return None
    # comm (field 2) may hold spaces and parentheses: split after the last ')'.
    fields = data[data.rfind(b")") + 2:].split()
    try:
        return fields[0].decode(), int(fields[1]), int(fields[3]), int(fields[19])
    except (IndexError, ValueError):
        return None


def process_group(pid):
    """The process group of pid, None when the process is gone."""
    data = _read(pid, "stat")
    if data is None:
        return None
    fields = data[data.rfind(b")") + 2:].split()
    try:
        return int(fields[2])
    except (IndexError, ValueError):
        return None


def environ(pid):
    """The process's initial environment as a dict of bytes, None when unreadable."""
    data = _read(pid, "environ")
    if data is None:
        return None
    return environ_bytes_of(data)


def environ_bytes_of(data):
    """/proc/PID/environ's bytes as a dict of bytes."""
    env = {}
    for entry in data.split(b"\0"):
        key, sep, value = entry.partition(b"=")
        if sep:
            env[key] = value
    return env


def of_another_test(env):
    """True for a process that a different test of our own suite started: the sweep's tests run in parallel and
    each marks its processes with SWEEP_TEST_TAG (tests/sweep/sweeptest.py). Only where this sweep carries a tag
    itself; a process without the tag (every real daemon, server or client) is never skipped."""
    own = os.environ.get("SWEEP_TEST_TAG")
    theirs = env.get(b"SWEEP_TEST_TAG") if env else None
    return bool(own) and theirs is not None and theirs != os.fsencode(own)


def owner(pid):
    """The effective UID of the process (the owner of /proc/PID), None when it is gone."""
    try:
        return os.stat(f"/proc/{pid}").st_uid
    except OSError:
        return None


def cmdline(pid):
    data = _read(pid, "cmdline")
    return [a.decode(errors="replace") for a in data.split(b"\0") if a] if data is not None else []


class Proc:
    """A process identified by pid and start time (immune to pid reuse)."""

    def __init__(self, pid, starttime, argv=None):
        self.pid, self.starttime = pid, starttime
        self.argv = argv if argv is not None else cmdline(pid)

    def alive(self):
        s = stat(self.pid)
        return s is not None and s[3] == self.starttime and s[0] not in ("Z", "X")

    def describe(self):
        return {"pid": self.pid, "cmdline": " ".join(self.argv)[:200]}

    def __eq__(self, other):
        return (self.pid, self.starttime) == (other.pid, other.starttime)

    def __hash__(self):
        return hash((self.pid, self.starttime))


def _norm(path):
    return os.path.normpath(os.fsdecode(path)) if path else ""


def carrying_pipe_dir(pipe_dir, exclude=()):
    """Live processes whose environment has CUDA_MPS_PIPE_DIRECTORY=pipe_dir."""
    want = _norm(pipe_dir)
    found = []
    for pid in all_pids():
        if pid == os.getpid() or pid in exclude:
            continue
        env = environ(pid)
        if not env or _norm(env.get(PIPE_KEY, b"")) != want:
            continue
        s = stat(pid)
        if s is not None and s[0] not in ("Z", "X"):
            found.append(Proc(pid, s[3]))
    return found


def with_descendants(procs):
    """procs plus every live descendant of them (the MPS server is the daemon's child)."""
    children = {}
    for pid in all_pids():
        s = stat(pid)
        if s is not None and s[0] not in ("Z", "X"):
            children.setdefault(s[1], []).append((pid, s[3]))
    result, todo = set(procs), [p.pid for p in procs]
    while todo:
        for pid, start in children.get(todo.pop(), []):
            p = Proc(pid, start)
            if p not in result:
                result.add(p)
                todo.append(pid)
    return result


def session_members(sid):
    """Live processes of session sid (a job started with start_new_session=True)."""
    found = []
    for pid in all_pids():
        s = stat(pid)
        if s is not None and s[2] == sid and s[0] not in ("Z", "X"):
            found.append(Proc(pid, s[3]))
    return found


def wait_gone(get_live, timeout, poll=0.05):
    """Polls get_live() until it returns nothing or timeout passes; returns the last answer."""
    deadline = time.monotonic() + timeout
    while True:
        live = get_live()
        if not live or time.monotonic() >= deadline:
            return live
        time.sleep(poll)


def signal_all(procs, sig):
    for p in procs:
        if p.alive():
            try:
                os.kill(p.pid, sig)
            except (ProcessLookupError, PermissionError):
                pass


def terminate(get_live, term_wait=3.0, kill_wait=3.0):
    """SIGTERM, then SIGKILL, whatever get_live() reports; returns (terminated, killed, survivors)."""
    live = get_live()
    terminated = [p.describe() for p in live]
    signal_all(live, signal.SIGTERM)
    live = wait_gone(get_live, term_wait)
    killed = [p.describe() for p in live]
    signal_all(live, signal.SIGKILL)
    survivors = [p.describe() for p in wait_gone(get_live, kill_wait)]
    return terminated, killed, survivors
