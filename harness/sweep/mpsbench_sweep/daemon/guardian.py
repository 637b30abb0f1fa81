"""One MPS daemon per node, held by a guardian process on that node.

    python3 -m mpsbench_sweep.daemon.guardian serve --base-dir DIR --control PATH [...]
    python3 -m mpsbench_sweep.daemon.guardian cleanup --base-dir DIR --control PATH

`serve` starts the daemon (mps_daemon.Daemon), prints one JSON line
{"event": "ready"|"failed", "host": ...}, then waits on stdin. A "stop" line,
end of input, SIGTERM, SIGINT or SIGHUP make it quit the daemon, verify that
it exited, remove its directories and print {"event": "stopped", "report": ...}.

Why a guardian process instead of calling the functions from the sweep:
- multi-node: the same program runs once per node under
  `srun --ntasks-per-node=1 --overlap --input=all` or
  `mpirun --map-by ppr:1:node --stdin all`; it must stay alive for the whole
  MPS phase because Slurm (proctrack/cgroup) kills what a step leaves behind;
- every exit path: the guardian reads its stdin from the sweep, so even if the
  sweep is SIGKILLed (OOM killer, time limit) the guardian sees end of input and
  removes the daemon; where the sweep started it directly it also asks for
  SIGTERM when the sweep dies (lifetime.die_with_parent), which interrupts a
  daemon start in progress. The sweep uses it on a single node too. It is not
  run under a keeper: a keeper would kill it before its cleanup is done.
`cleanup` stops a daemon left behind at DIR (say, after the guardian itself was
SIGKILLed) the same way.
"""
import argparse
import json
import os
import signal
import socket
import sys

from ..jobs.outcome import Interrupted
from ..lifetime import die_with_parent, stop_signals
from ..node_channel import NodeChannel
from .mps_daemon import Daemon, DaemonError, describe_foreign, find_foreign


def _emit(event, **fields):
    try:
        print(json.dumps({"event": event, "host": socket.gethostname(), **fields}), flush=True)
    except (BrokenPipeError, OSError):
        pass  # the sweep is gone: clean up all the same


def serve(args, stop):
    if not die_with_parent(signal.SIGTERM):
        _emit("failed", error="the sweep ended before the guardian started")
        return 3
    daemon = Daemon(args.control, args.base_dir, args.log_copy_dir)
    ok = False
    try:
        # A daemon under the sweep's own base name is a sibling guardian's (only where several
        # "nodes" share one host, as in the tests).
        foreign = (find_foreign(own_prefix=args.sweep_base or args.base_dir, other_users=not args.allow_other_users)
                   if args.refuse_existing else [])
        if foreign:
            _emit("failed", error=f"an MPS daemon not started by this sweep is running: {describe_foreign(foreign)}; "
                                  "it is left alone", foreign=foreign)
        else:
            daemon.start(args.ready_timeout)
            _emit("ready", pipe_dir=daemon.pipe_dir, log_dir=daemon.log_dir,
                  pids=sorted(p.pid for p in daemon.processes()))
            ok = True
            while True:
                line = sys.stdin.readline()
                if not line or line.strip() == "stop":
                    break
    except Interrupted:
        pass
    except DaemonError as e:
        _emit("failed", error=str(e))
    finally:
        stop.cleaning = True  # first: the cleanup must finish, whatever signal comes now
        report = daemon.stop(args.quit_timeout, args.grace)
        _emit("stopped", report=report)
    return 0 if ok and report["ok"] else 3


def cleanup(args):
    daemon = Daemon(args.control, args.base_dir, args.log_copy_dir)
    daemon.created = os.path.isdir(args.base_dir)
    result = daemon.stop(args.quit_timeout, args.grace)
    print(json.dumps(result))
    return 0 if result["ok"] else 3


def main(argv=None):
    parser = argparse.ArgumentParser(prog="python3 -m mpsbench_sweep.daemon.guardian", description=__doc__.split("\n")[0])
    parser.add_argument("action", choices=["serve", "cleanup"])
    parser.add_argument("--base-dir", required=True, help="private directory; pipe/ and log/ go inside")
    parser.add_argument("--control", required=True, help="nvidia-cuda-mps-control to run")
    parser.add_argument("--log-copy-dir", default=None, help="copy the daemon's logs to DIR/HOST before removal")
    parser.add_argument("--ready-timeout", type=float, default=15.0)
    parser.add_argument("--quit-timeout", type=float, default=10.0)
    parser.add_argument("--grace", type=float, default=10.0)
    parser.add_argument("--sweep-base", default=None,
                        help="base directory name the sweep chose (default: --base-dir); daemons under it are ours")
    parser.add_argument("--refuse-existing", action="store_true",
                        help="fail (without touching it) when another MPS daemon runs on this node")
    parser.add_argument("--allow-other-users", action="store_true",
                        help="with --refuse-existing: ignore other users' MPS processes (--other-mps-users go-on)")
    args = parser.parse_args(argv)
    if args.action == "cleanup":
        return cleanup(args)
    stop = stop_signals.StopOnce()
    stop.install()
    try:
        return serve(args, stop)
    except Interrupted as e:  # a signal while the failure was being told: the cleanup ran all the same
        return 128 + e.signum


class Guardian(NodeChannel):
    """The sweep's side of `serve`: one guardian per node, reached through one launcher process."""

    @property
    def ready(self):
        return self.seen("ready")

    @property
    def failed(self):
        return self.seen("failed")

    def wait_ready(self, timeout):
        """Raises DaemonError unless every node reported ready. A node that fails does not cut the others'
        starts short: each ends its start (ready or failed, within its own ready timeout) and is then stopped
        by its guardian, which reports. Interrupted mid-start instead, a guardian still starting up (a loaded
        node) could die before its signal handling exists, its node left without a stop report."""
        self.wait_until(lambda: len(self.ready) + len(self.failed) >= self.nodes, timeout)
        if self.failed:
            raise DaemonError("; ".join(f"{e['host']}: {e['error']}" for e in self.failed))
        if len(self.ready) < self.nodes:
            raise DaemonError(f"{len(self.ready)} of {self.nodes} node(s) reported a ready MPS daemon "
                              f"within {timeout:g} s")

    def stop(self, timeout):
        """Asks every guardian to stop; returns the stop reports (a guardian that does not answer is
        terminated, which makes it clean up too)."""
        if self.proc is None:
            return []
        self.send("stop")
        self.close_input()
        if len(self.ready) + len(self.failed) < self.nodes:
            self.signal(signal.SIGTERM)  # a guardian still starting reads no input: interrupt it
        self.wait_for("stopped", self.nodes, timeout)  # ends early when the launcher's output ends
        for sig, wait in ((None, 5), (signal.SIGTERM, timeout), (signal.SIGKILL, 5)):
            if sig is not None:
                self.signal(sig)
            if self.wait_exit(wait):
                break
        self.wait_for("stopped", self.nodes, 1.0)
        return [e["report"] for e in self.seen("stopped")]


if __name__ == "__main__":
    sys.exit(main())
