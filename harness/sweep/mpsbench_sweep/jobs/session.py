"""Ending a job: its session, and everything left in it.

Every job runs in a session of its own (start_new_session), so a terminal's Ctrl-C reaches only the
sweep, which then ends the job itself: SIGTERM to the session's process group (mpirun passes it to the
ranks), SIGKILL after 10 s, then any process left in the session.
"""
import os
import signal
import subprocess

from .. import procs
from ..locate import package_path
from ..text import say

END_WAIT_S = 10.0


def helper_env(env):
    """env with our packages on PYTHONPATH, for a helper started as python3 -m mpsbench_sweep.… (a farmer,
    a guardian), which may run on another node through the launcher."""
    env = dict(env)
    env["PYTHONPATH"] = os.pathsep.join(p for p in (package_path(), env.get("PYTHONPATH")) if p)
    return env


def end_session(proc):
    """Ends a job's session: SIGTERM to its process group, SIGKILL after 10 s, then any process left."""
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
    members = lambda: procs.session_members(proc.pid)  # noqa: E731
    if members():
        terminated, _, survivors = procs.terminate(members, 3.0, 3.0)
        say(f"ended {len(terminated)} left-over process(es) of the job"
            + (f"; {len(survivors)} survived SIGKILL" if survivors else ""))
