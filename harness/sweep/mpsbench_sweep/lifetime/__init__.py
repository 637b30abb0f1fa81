"""Processes that must not outlive what started them: what Linux offers for it, standard library only.

Process groups and sessions are not enough: a program may start a child in a session of its own
(setsid), and a process whose parent is SIGKILLed is never told. So the sweep uses:
- PR_SET_PDEATHSIG (prctl): a process asks for a signal when its parent dies. The keeper, the
  farmer and the guardian ask for SIGTERM, first thing. A parent that died before the request is
  noticed by comparing getppid() with the parent seen before it (die_with_parent). Linux sends it when
  the *thread* that forked the child ends: the sweep starts its children from its main thread.
  Farmed runs do not ask: that would need Python code between fork and exec, which costs about 4 ms
  of every timed run; the farmer's own subreaper (the keeper) ends them should the farmer be killed.
- PR_SET_CHILD_SUBREAPER: orphans of a subreaper's descendants (a double fork, a setsid'd child
  whose parent exited) are re-parented to it instead of to init, so it still sees them among its
  descendants and can end them and reap them. The keeper and the farmer are subreapers.
Where prctl is missing (not Linux) both calls return False and only the process-group and session
cleanup remain; harness/sweep/README.md, "Process lifetime", says what is guaranteed.
"""
import ctypes
import os
import signal

from .. import procs

PR_SET_PDEATHSIG = 1
PR_SET_CHILD_SUBREAPER = 36

try:
    # The running interpreter's own symbols, libc's among them: ctypes.util.find_library("c") would start
    # /sbin/ldconfig -p in every sweep process (4 ms and a fork each) to find the libc already loaded.
    _LIBC = ctypes.CDLL(None, use_errno=True)
    _PRCTL = _LIBC.prctl
    _PRCTL.argtypes = [ctypes.c_int, ctypes.c_ulong, ctypes.c_ulong, ctypes.c_ulong, ctypes.c_ulong]
    _PRCTL.restype = ctypes.c_int
except (OSError, AttributeError):
    _PRCTL = None


def _prctl(option, value):
    return _PRCTL is not None and _PRCTL(option, value, 0, 0, 0) == 0


def die_with_parent(sig=signal.SIGTERM, expected_parent=None):
    """Ask for sig when the parent dies; False when the parent is already gone: it is not expected_parent
    (when given), or it changed while asking. Call it first thing in a process the sweep starts."""
    parent = os.getppid()
    _prctl(PR_SET_PDEATHSIG, int(sig))
    return os.getppid() == parent and (expected_parent is None or parent == expected_parent)


def become_subreaper():
    """Orphaned descendants are re-parented to this process; False where prctl cannot do it."""
    return _prctl(PR_SET_CHILD_SUBREAPER, 1)


def stray_children(tracked=(), skip_own_group=False):
    """(live, zombies): this process's children that are not in tracked (pids), as procs.Proc. With a subreaper
    these include the orphans of its descendants. skip_own_group: leave out children in this process's own
    process group, the helpers it starts itself (nvidia-smi, the probe); farmed runs lead groups of their own."""
    me, group = os.getpid(), os.getpgrp()
    live, zombies = [], []
    for pid in procs.all_pids():
        s = procs.stat(pid)
        if s is None or s[1] != me or pid in tracked:
            continue
        if skip_own_group and procs.process_group(pid) == group:
            continue
        (zombies if s[0] in ("Z", "X") else live).append(procs.Proc(pid, s[3], argv=[]))
    return live, zombies


def reap(found):
    """Reaps those of found that are our children and have exited (never waitpid(-1): a Popen may be
    waiting for its own child)."""
    for p in found:
        try:
            os.waitpid(p.pid, os.WNOHANG)
        except ChildProcessError:
            pass


def end_strays(grace, tracked=(), skip_own_group=False, with_tracked=False):
    """Ends the stray children (stray_children) and everything below them: SIGTERM, SIGKILL after grace
    seconds, then reaps them. Children of a stray that is ended become strays themselves (we are their
    subreaper) and are ended too. with_tracked: end the tracked children and theirs as well, but leave
    reaping them to their Popen. Returns how many processes there were at first."""
    def live():
        roots, zombies = stray_children(tracked, skip_own_group)
        reap(zombies)
        if with_tracked:
            roots += [p for p in (procs.Proc(pid, (procs.stat(pid) or [0] * 4)[3], argv=[]) for pid in tracked)
                      if p.alive()]
        return list(procs.with_descendants(roots))

    first = live()
    if first:
        procs.terminate(live, grace, 5.0)
    reap(stray_children(tracked, skip_own_group)[1])
    return len(first)
