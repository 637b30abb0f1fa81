"""The keeper: runs one command and makes sure nothing of it outlives it or the sweep.

    python3 -m mpsbench_sweep.lifetime.keeper --parent PID [--grace S] -- COMMAND [ARGS...]

The sweep starts every job (mpirun and its ranks, the farmers of an application) through a keeper,
its direct child, in a session of its own. The keeper
- asks for SIGTERM when the sweep dies (PR_SET_PDEATHSIG), so a SIGKILLed sweep still ends its job:
  process groups and sessions cannot, since nobody is left to signal them;
- is a subreaper (PR_SET_CHILD_SUBREAPER), so whatever the command starts stays below it, even a
  child in a session of its own whose parent exited;
- on SIGTERM, SIGINT or SIGHUP, or when the command exits, ends every process left below it: SIGTERM,
  SIGKILL after --grace seconds (default 5, less than the sweep's own 10 s before it kills the
  keeper), and reaps them;
- exits as the command did: its exit status, or killed by the same signal.
It prints nothing but its own error (a command that cannot start: status 127, as a shell).
"""
import os
import signal
import subprocess
import sys

from . import become_subreaper, die_with_parent, end_strays
from .stop_signals import STOP_SIGNALS
_stopping = []


def _on_signal(signum, frame):
    _stopping.append(signum)


def _exit_like(status):
    """Exit with status as Popen.returncode gives it: a negative one is death by that signal."""
    if status >= 0:
        return status
    sig = -status
    if sig != signal.SIGKILL:
        signal.signal(sig, signal.SIG_DFL)
    os.kill(os.getpid(), sig)
    return 128 + sig  # the signal did not end us (it is ignored here): say it as a shell would


def main(argv=None):
    argv = list(sys.argv[1:] if argv is None else argv)
    options = {"--parent": None, "--grace": "5"}
    while argv[:1] and argv[0] in options and len(argv) > 1:
        options[argv[0]], argv = argv[1], argv[2:]
    if argv[:1] == ["--"]:
        argv = argv[1:]
    if not argv or options["--parent"] is None:
        print("usage: python3 -m mpsbench_sweep.lifetime.keeper --parent PID [--grace S] -- COMMAND [ARGS...]",
              file=sys.stderr)
        return 2
    grace = float(options["--grace"])
    for sig in STOP_SIGNALS:
        signal.signal(sig, _on_signal)
    if not die_with_parent(signal.SIGTERM, int(options["--parent"])):
        return 128 + signal.SIGTERM  # the sweep is already gone: start nothing
    become_subreaper()
    try:
        child = subprocess.Popen(argv)
    except OSError as e:
        print(f"mpsbench-sweep: cannot run {argv[0]}: {e.strerror or e}", file=sys.stderr, flush=True)
        return 127
    status = None
    while status is None:
        if _stopping:
            end_strays(grace, tracked=(child.pid,), with_tracked=True)  # the command and all below it
        try:
            status = child.wait(timeout=0.1)
        except subprocess.TimeoutExpired:
            continue
    end_strays(grace)  # what the command left behind
    return _exit_like(status)


if __name__ == "__main__":
    sys.exit(main())
