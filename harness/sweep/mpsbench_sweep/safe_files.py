"""Files the sweep writes, safe in a shared, world-writable directory.

A neighbour who can create entries where the sweep writes (a cluster's scratch
space, /tmp) must not be able to make it write through a planted symbolic link
into another file, replace a FIFO or device (`--output /dev/null` as root used
to replace /dev/null itself), or guess a temporary name. So:
- the merged file and sweep.json are written to a mkstemp temporary (O_EXCL,
  random name) in the target's directory and renamed over the target only if
  the target is missing or a regular file;
- logs are opened with O_NOFOLLOW and O_NONBLOCK (a FIFO cannot block us) and
  must turn out to be regular files;
- the work directory is ours: created by the sweep, or an existing directory
  (not a link) owned by this user that nobody else can write in.
"""
import errno
import os
import stat
import tempfile

_KINDS = ((stat.S_ISREG, "a regular file"), (stat.S_ISLNK, "a symbolic link"), (stat.S_ISDIR, "a directory"), (stat.S_ISFIFO, "a FIFO"),
          (stat.S_ISCHR, "a character device"), (stat.S_ISBLK, "a block device"), (stat.S_ISSOCK, "a socket"))


class UnsafePath(Exception):
    """A path the sweep refuses to write (bad input: exit status 2)."""


def kind_of(mode):
    return next((name for test, name in _KINDS if test(mode)), "not a regular file")


def check_target(path):
    """Raises UnsafePath when something other than a regular file is at path, or its directory is missing."""
    try:
        st = os.lstat(path)
    except FileNotFoundError:
        st = None
    except OSError as e:
        raise UnsafePath(f"cannot inspect {path}: {e.strerror}") from None
    if st is not None and not stat.S_ISREG(st.st_mode):
        raise UnsafePath(f"{path} is {kind_of(st.st_mode)}, not a regular file: refusing to replace it")
    directory = os.path.dirname(os.path.abspath(path))
    if not os.path.isdir(directory):
        raise UnsafePath(f"cannot write {path}: directory {directory} does not exist")


def write_atomic(path, text):
    """text into path through a random temporary beside it (fsync, rename); readers never see a torn file."""
    check_target(path)
    directory = os.path.dirname(os.path.abspath(path))
    fd, tmp = tempfile.mkstemp(prefix=f".{os.path.basename(path)}.", dir=directory)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as f:
            f.write(text)
            f.flush()
            os.fsync(f.fileno())
        mask = os.umask(0)
        os.umask(mask)
        os.chmod(tmp, 0o644 & ~mask)
        check_target(path)  # again: something may have been put there meanwhile
        os.replace(tmp, path)
    except BaseException:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise
    try:
        dir_fd = os.open(directory, os.O_RDONLY)
        try:
            os.fsync(dir_fd)
        finally:
            os.close(dir_fd)
    except OSError:
        pass


def open_log(path):
    """A text file for writing at path (created or truncated), never through a link, never a FIFO or device."""
    try:
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC,
                     0o644)
    except OSError as e:
        if e.errno in (errno.ELOOP, errno.ENXIO, errno.EISDIR):
            st = os.lstat(path)
            raise UnsafePath(f"{path} is {kind_of(st.st_mode)}, not a regular file: refusing to write it") from None
        raise
    st = os.fstat(fd)
    if not stat.S_ISREG(st.st_mode):
        os.close(fd)
        raise UnsafePath(f"{path} is {kind_of(st.st_mode)}, not a regular file: refusing to write it")
    os.set_blocking(fd, True)
    return os.fdopen(fd, "w", encoding="utf-8", errors="replace")


def own_directory(path):
    """Creates path (mode 0755 less the umask), or accepts an existing directory that only this user can write.

    Raises UnsafePath otherwise: in a directory others can write, they could plant links where the sweep
    writes its part files and logs."""
    try:
        os.makedirs(os.path.dirname(os.path.abspath(path)), exist_ok=True)
        os.mkdir(path, 0o755)
        return
    except FileExistsError:
        pass
    except OSError as e:
        raise UnsafePath(f"cannot create {path}: {e.strerror}") from None
    st = os.lstat(path)
    if not stat.S_ISDIR(st.st_mode):
        raise UnsafePath(f"{path} is {kind_of(st.st_mode)}, not a directory")
    if st.st_uid != os.geteuid():
        raise UnsafePath(f"{path} belongs to another user (uid {st.st_uid}): choose a directory of your own")
    if st.st_mode & (stat.S_IWGRP | stat.S_IWOTH):
        raise UnsafePath(f"{path} can be written by other users (mode {stat.S_IMODE(st.st_mode):o}), who could "
                         "plant links in it: choose another directory or chmod go-w it")
