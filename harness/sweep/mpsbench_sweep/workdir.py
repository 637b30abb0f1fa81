"""The work directory belongs to one sweep at a time, and --output never names a file the sweep uses in it.

Two sweeps given one work directory would write the same part files, logs and sweep.json, and each
merge the other's results. So a sweep holds an exclusive lock (flock) on WORKDIR/.mpsbench-sweep.lock
from before its first file there until it exits; the kernel drops it when the process ends, however
it ends, so a killed sweep never leaves a stale lock. The lock file is opened without following a
link (O_NOFOLLOW), without blocking on a FIFO (O_NONBLOCK), and must be a regular file of ours; it is
close-on-exec, so no job or daemon the sweep starts holds the lock after it. A second sweep refuses
with one line naming the first one's pid (exit 2).

The merged file is written after every job; if --output named a part file, a log or sweep.json of the
sweep's own work directory, one would overwrite the other and the part files are deleted at the end:
such an --output is refused up front.
"""
import errno
import fcntl
import fnmatch
import os
import stat

from .inputs import InputError, decimal_or_none
from .safe_files import kind_of
from .text import quoted

LOCK_NAME = ".mpsbench-sweep.lock"
# What the sweep writes in its work directory (plan.py, jobs/, app/, daemon/lifecycle.py).
RESERVED = ("sweep.json", LOCK_NAME, "part-*")
RESERVED_DIRS = ("app-runs", "mps-logs-*")


class WorkdirLock:
    def __init__(self, fd):
        self.fd = fd

    def release(self):
        if self.fd is not None:
            os.close(self.fd)
            self.fd = None


def _holder(fd):
    try:
        return decimal_or_none(os.pread(fd, 32, 0).decode("ascii", "replace").strip())
    except OSError:
        return None


def claim(workdir):
    """The lock on workdir (an existing directory of ours), or InputError when another sweep holds it."""
    path = os.path.join(workdir, LOCK_NAME)
    flags = os.O_RDWR | os.O_CREAT | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC
    try:
        fd = os.open(path, flags, 0o600)
    except OSError as e:
        if e.errno in (errno.ELOOP, errno.ENXIO, errno.EISDIR):
            raise InputError(f"--workdir: {quoted(path)} is {kind_of(os.lstat(path).st_mode)}, not the sweep's lock "
                             "file: refusing to use it") from None
        raise InputError(f"--workdir: cannot create {quoted(path)}: {e.strerror}") from None
    st = os.fstat(fd)
    if not stat.S_ISREG(st.st_mode) or st.st_uid != os.geteuid():
        os.close(fd)
        raise InputError(f"--workdir: {quoted(path)} is not a regular file of yours: refusing to use it")
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except OSError as e:
        holder = _holder(fd)
        os.close(fd)
        if e.errno in (errno.EWOULDBLOCK, errno.EACCES):
            raise InputError(f"--workdir: another mpsbench-sweep{f' (pid {holder})' if holder else ''} is using "
                             f"{quoted(workdir)}; wait for it to end or give another --workdir (or --output)") from None
        raise InputError(f"--workdir: cannot lock {quoted(path)}: {e.strerror}") from None
    os.ftruncate(fd, 0)
    os.pwrite(fd, f"{os.getpid()}\n".encode(), 0)
    return WorkdirLock(fd)


def check_output(output, workdir):
    """InputError when output is a file the sweep itself writes (or removes) in workdir."""
    where = os.path.realpath(os.path.dirname(os.path.abspath(output)))
    root = os.path.realpath(workdir)
    relative = os.path.relpath(os.path.join(where, os.path.basename(output)), root)
    if relative.startswith(os.pardir + os.sep) or relative == os.pardir or os.path.isabs(relative):
        return
    parts = relative.split(os.sep)
    reserved = ((len(parts) == 1 and any(fnmatch.fnmatchcase(parts[0], p) for p in RESERVED)) or
                (len(parts) > 1 and any(fnmatch.fnmatchcase(parts[0], p) for p in RESERVED_DIRS)))
    if relative == "." or reserved:
        raise InputError(f"--output: {quoted(output)} is a file the sweep itself writes in its work directory "
                         f"{quoted(workdir)} (part files, logs, sweep.json, app-runs/, mps-logs-*/); choose another "
                         "name or place")
