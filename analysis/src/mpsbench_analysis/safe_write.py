"""Writing output files without following planted links or clobbering non-files.

Outputs often go to shared, world-writable directories (/tmp, a CI
workspace).  Opening ``PATH`` for writing there would follow a symbolic link
someone planted at that name and overwrite the file it points to, block
forever on a FIFO, or write into a device.  So every output is written to a
new file with an unpredictable name, created with O_CREAT|O_EXCL|O_NOFOLLOW
in the target's directory (a name planted in advance makes the creation
fail, and another name is drawn), fsync'ed, and renamed over the target:
a rename replaces the directory entry and never writes through it.  Right
before creating the temporary file and again right before the rename, the
target is lstat'ed: an existing regular file is replaced, anything else (a
symbolic link, FIFO, device, directory, socket) is refused, so /dev/null
given as an output is left alone.  Every step works relative to a file
descriptor of the directory, so swapping the directory for a link half-way
does not redirect the write.  Needs a POSIX system (dir_fd, O_NOFOLLOW).
"""

from __future__ import annotations

import os
import secrets
import stat
from pathlib import Path

from .errors import AnalysisError

_KINDS = ((stat.S_ISLNK, "a symbolic link"), (stat.S_ISFIFO, "a FIFO (named pipe)"),
          (stat.S_ISCHR, "a character device"), (stat.S_ISBLK, "a block device"),
          (stat.S_ISDIR, "a directory"), (stat.S_ISSOCK, "a socket"), (stat.S_ISREG, "a regular file"))

_CREATE = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC
_DIRECTORY = os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC

#: Leaves room for the dot, the random part and the suffix within NAME_MAX (255).
_STEM_LIMIT = 200


def _kind(mode: int) -> str:
    return next((what for test, what in _KINDS if test(mode)), "of an unknown kind")


def _cannot_write(exc: OSError, shown: str | Path) -> AnalysisError:
    return AnalysisError(f"cannot write: {exc.strerror or exc}", str(shown))


def _refuse_unless_regular(dir_fd: int, name: str, shown: str | Path) -> None:
    try:
        st = os.stat(name, dir_fd=dir_fd, follow_symlinks=False)
    except FileNotFoundError:
        return
    except OSError as exc:
        raise _cannot_write(exc, shown) from None
    if not stat.S_ISREG(st.st_mode):
        raise AnalysisError(f"refusing to replace {shown}: it is {_kind(st.st_mode)}, not a regular file")


def _create_temporary(dir_fd: int, name: str) -> tuple[str, int]:
    for _ in range(100):
        temporary = f".{name[:_STEM_LIMIT]}.{secrets.token_hex(8)}.tmp"
        try:
            return temporary, os.open(temporary, _CREATE, 0o666, dir_fd=dir_fd)
        except FileExistsError:  # taken, perhaps planted: draw another name
            continue
    raise FileExistsError(17, "no unused temporary file name (is someone planting them?)")


def _write_all(fd: int, data: bytes) -> None:
    view = memoryview(data)
    while view:
        view = view[os.write(fd, view):]


def replace_in(dir_fd: int, name: str, data: bytes, shown: str | Path) -> None:
    """Atomically replaces the regular file ``name`` in the open directory ``dir_fd`` with ``data``.

    ``shown``: the path for messages.  Raises AnalysisError when the target
    exists and is not a regular file, or on any OS error (nothing is left
    behind then).
    """
    if name in ("", ".", "..") or "/" in name:
        raise AnalysisError("not a file name", str(shown))
    _refuse_unless_regular(dir_fd, name, shown)
    try:
        temporary, fd = _create_temporary(dir_fd, name)
    except OSError as exc:
        raise _cannot_write(exc, shown) from None
    try:
        try:
            _write_all(fd, data)
            os.fsync(fd)
        finally:
            os.close(fd)
        _refuse_unless_regular(dir_fd, name, shown)
        os.replace(temporary, name, src_dir_fd=dir_fd, dst_dir_fd=dir_fd)
    except BaseException as exc:
        try:
            os.unlink(temporary, dir_fd=dir_fd)
        except OSError:
            pass
        if isinstance(exc, OSError):
            raise _cannot_write(exc, shown) from None
        raise
    try:
        os.fsync(dir_fd)  # the rename itself survives a crash
    except OSError:
        pass  # some file systems cannot sync a directory; the data is synced


def _open_directory(path: Path, shown: str | Path, flags: int = 0) -> int:
    try:
        return os.open(path, _DIRECTORY | flags)
    except FileNotFoundError:
        raise AnalysisError(f"cannot write: directory {path} does not exist", str(shown)) from None
    except OSError as exc:
        raise AnalysisError(f"cannot write: {exc.strerror or exc} (directory {path})", str(shown)) from None


def write_file(path: str | Path, data: str | bytes) -> None:
    """Writes ``data`` (str as UTF-8) to ``path`` the safe way (see the module doc).

    The directory may be reached through links (a user's own layout); the
    file name itself must not be one.
    """
    target = Path(path)
    raw = data.encode("utf-8") if isinstance(data, str) else data
    if str(path).endswith("/"):
        raise AnalysisError("not a file name (ends with /)", str(path))
    dir_fd = _open_directory(target.parent, path)
    try:
        replace_in(dir_fd, target.name, raw, path)
    finally:
        os.close(dir_fd)


class OutputDirectory:
    """A directory that files are written into the safe way; created when missing.

    Refuses a directory given as a symbolic link (it may have been planted
    to point elsewhere) or a path that is not a directory.
    """

    def __init__(self, path: str | Path) -> None:
        self.path = Path(path)
        try:
            os.makedirs(self.path)
        except FileExistsError:
            pass  # judged below, by what it is rather than by what it points to
        except OSError as exc:
            raise AnalysisError(f"cannot create the output directory: {exc.strerror or exc}", str(path)) from None
        try:
            st = os.lstat(self.path)
        except OSError as exc:
            raise AnalysisError(f"cannot use the output directory: {exc.strerror or exc}", str(path)) from None
        if not stat.S_ISDIR(st.st_mode):
            raise AnalysisError(f"refusing to use {path} as the output directory: it is {_kind(st.st_mode)}, "
                                "not a directory")
        self._fd = _open_directory(self.path, path, os.O_NOFOLLOW)  # O_NOFOLLOW: no swap since the lstat

    def write(self, name: str, data: bytes) -> Path:
        """Writes ``name`` in the directory; returns its path."""
        target = self.path / name
        replace_in(self._fd, name, data, target)
        return target

    def close(self) -> None:
        if self._fd >= 0:
            os.close(self._fd)
            self._fd = -1

    def __enter__(self) -> OutputDirectory:
        return self

    def __exit__(self, *_exc: object) -> None:
        self.close()
