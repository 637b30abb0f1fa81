"""The work directory belongs to one sweep at a time, and --output never names a file the sweep uses in it.

Two sweeps given one work directory would write the same part files, logs and sweep.json, and each
merge the other's results. So a sweep holds an exclusive lock (flock) on WORKDIR/.mpsbench-sweep.lock
from before its first file there until it exits; the kernel drops it when the process ends, however
it ends, so a killed sweep never leaves a stale lock. The lock file is opened without following a
link (O_NOFOLLOW), without blocking on a FIFO (O_NONBLOCK), and must be a regular file of ours; it is
close-on-exec, so no job or daemon the sweep starts holds the lock after it. A second sweep refuses
with one line naming the first one's pid (exit 2).

The merged file (--output) is owned the same way: two sweeps with different work directories but one
--output would replace each other's results after every job. So a sweep also holds a lock on
`.NAME.lock` beside the output (the output itself is replaced by a rename after every job, so a lock
on it would not last), opened as carefully; the lock file is removed when the sweep has written the
file for the last time (a sweep that finds its lock file replaced meanwhile takes the new one).

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
    def __init__(self, fd, path=None):
        self.fd, self.path = fd, path

    def release(self):
        """Drops the lock; a lock with a path (the output's) removes its file first, if it is still ours."""
        if self.fd is None:
            return
        if self.path is not None:
            try:
                st, now = os.fstat(self.fd), os.lstat(self.path)
                if (st.st_dev, st.st_ino) == (now.st_dev, now.st_ino):
                    os.unlink(self.path)
            except OSError:
                pass
        os.close(self.fd)
        self.fd = None


def _holder(fd):
    try:
        return decimal_or_none(os.pread(fd, 32, 0).decode("ascii", "replace").strip())
    except OSError:
        return None


def _lock(path, flag, owner, busy):
    """An exclusive flock on the regular file of ours at path (created if missing), or InputError: flag names
    the option, owner what path belongs to, busy what another sweep holding it is doing."""
    flags = os.O_RDWR | os.O_CREAT | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC
    for _ in range(10):
        try:
            fd = os.open(path, flags, 0o600)
        except OSError as e:
            if e.errno in (errno.ELOOP, errno.ENXIO, errno.EISDIR):
                raise InputError(f"{flag}: {quoted(path)} is {kind_of(os.lstat(path).st_mode)}, not the sweep's lock "
                                 f"file for {owner}: refusing to use it") from None
            raise InputError(f"{flag}: cannot create {quoted(path)}: {e.strerror}") from None
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode) or st.st_uid != os.geteuid():
            os.close(fd)
            raise InputError(f"{flag}: {quoted(path)} is not a regular file of yours: refusing to use it as the lock "
                             f"for {owner}")
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError as e:
            holder = _holder(fd)
            os.close(fd)
            if e.errno in (errno.EWOULDBLOCK, errno.EACCES):
                raise InputError(f"{flag}: another mpsbench-sweep{f' (pid {holder})' if holder else ''} is {busy}; "
                                 f"wait for it to end or give another {flag}") from None
            raise InputError(f"{flag}: cannot lock {quoted(path)}: {e.strerror}") from None
        try:
            now = os.lstat(path)
        except OSError:
            now = None
        if now is not None and (now.st_dev, now.st_ino) == (st.st_dev, st.st_ino):
            os.ftruncate(fd, 0)
            os.pwrite(fd, f"{os.getpid()}\n".encode(), 0)
            return fd
        os.close(fd)  # the sweep that held it removed it meanwhile: take the one there now
    raise InputError(f"{flag}: the lock file {quoted(path)} keeps being replaced: refusing to go on")


def claim(workdir):
    """The lock on workdir (an existing directory of ours), or InputError when another sweep holds it."""
    path = os.path.join(workdir, LOCK_NAME)
    return WorkdirLock(_lock(path, "--workdir", "the work directory", f"using {quoted(workdir)}"))


def output_lock_path(output):
    return os.path.join(os.path.dirname(os.path.abspath(output)), f".{os.path.basename(output)}.lock")


def claim_output(output):
    """The lock beside --output, or InputError when another sweep writes that file. release(remove=True) removes
    the lock file first (after the sweep's last write)."""
    path = output_lock_path(output)
    return WorkdirLock(_lock(path, "--output", f"the results file {quoted(output)}", f"writing {quoted(output)}"),
                       path)


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
