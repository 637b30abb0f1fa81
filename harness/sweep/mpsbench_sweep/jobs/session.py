"""Ending a job: its keeper, its session, and everything below them.

Every job runs under a keeper (lifetime/keeper.py) that leads a session of its own (start_new_session),
so a terminal's Ctrl-C reaches only the sweep, which then ends the job itself: SIGTERM to the session's
process group (mpirun passes it to the ranks; the keeper ends what is below it within its grace
period), SIGKILL after 10 s, then any process left in the session or below the keeper (a rank's child
in a session of its own is still below the keeper, its subreaper).
"""
import os
import signal
import subprocess
import sys

from .. import procs
from ..lifetime import keeper
from ..locate import package_path
from ..text import say

END_WAIT_S = 10.0
KEEPER_GRACE_S = 5.0  # less than END_WAIT_S: the keeper ends what is below it before the sweep kills it


def helper_command(module):
    """python3 running module's main() with our packages on its own sys.path: the helper's environment
    (PYTHONPATH included) stays exactly what it was given, and so does that of what it starts."""
    boot = (f"import sys; sys.path[:0] = {package_path().split(os.pathsep)!r}; "
            f"from {module} import main; sys.exit(main())")
    return [sys.executable, "-c", boot]


def kept(argv):
    """argv run under a keeper that ends with the sweep (the job's environment stays what its mode says)."""
    return helper_command(keeper.__name__) + ["--parent", str(os.getpid()), "--grace", f"{KEEPER_GRACE_S:g}",
                                              "--"] + list(argv)


def helper_env(env):
    """env with our packages on PYTHONPATH, for a helper started as python3 -m mpsbench_sweep.… (a farmer,
    a guardian), which may run on another node through the launcher."""
    env = dict(env)
    env["PYTHONPATH"] = os.pathsep.join(p for p in (package_path(), env.get("PYTHONPATH")) if p)
    return env


def end_session(proc):
    """Ends a job's session: SIGTERM to its process group, SIGKILL after 10 s, then any process left in the
    session or below its leader."""
    below = procs.with_descendants([procs.Proc(proc.pid, (procs.stat(proc.pid) or [0] * 4)[3], argv=[])])
    if proc.poll() is None:
        for sig in (signal.SIGTERM, signal.SIGKILL):
            try:
                os.killpg(proc.pid, sig)
            except (ProcessLookupError, PermissionError):
                pass
            try:
                proc.wait(timeout=END_WAIT_S)
                break
            except subprocess.TimeoutExpired:
                continue

    def members():
        return [p for p in set(procs.session_members(proc.pid)) | below if p.alive() and p.pid != proc.pid]

    if members():
        terminated, _, survivors = procs.terminate(members, 3.0, 3.0)
        say(f"ended {len(terminated)} left-over process(es) of the job"
            + (f"; {len(survivors)} survived SIGKILL" if survivors else ""))
