"""The sweep's side of a per-node agent: one launcher process runs the agent once on each node.

Used for the MPS guardians (mps_node.py) and the application farmers (farm.py).
The launcher (the agent itself on one node; `srun --ntasks-per-node=1 --input=all`
or `mpirun --map-by ppr:1:node --stdin all` on several) gives every copy of the
agent the same standard input, so one line written here reaches every node, and
merges their standard output, where each agent prints JSON events
`{"event": KIND, "host": HOST, ...}`. Anything else on that output (launcher
noise) is passed through to our stderr. The launcher runs in a session of its
own, so signalling its process group reaches every agent it started here.
"""
import json
import os
import queue
import subprocess
import sys
import threading
import time


class NodeChannel:
    def __init__(self, command, env, nodes):
        self.command, self.env, self.nodes = command, env, nodes
        self.proc = None
        self._events = queue.Queue()
        self._seen = {}
        self.ended = False  # the launcher's output has ended: no more events will come

    def launch(self):
        self.proc = subprocess.Popen(self.command, env=self.env, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                     text=True, start_new_session=True)
        threading.Thread(target=self._read, daemon=True).start()

    def _read(self):
        for line in self.proc.stdout:
            try:
                event = json.loads(line)
                event["event"] + event["host"]
            except (ValueError, KeyError, TypeError):
                sys.stderr.write(line)  # launcher noise
                continue
            self._events.put(event)
        self._events.put(None)  # end of output

    def seen(self, kind):
        """The events of this kind received so far, in arrival order."""
        return self._seen.setdefault(kind, [])

    def forget(self, kind):
        self._seen.pop(kind, None)

    def wait_until(self, done, timeout):
        """Collects events until done() holds, the output ended or timeout passed."""
        deadline = time.monotonic() + timeout
        while not self.ended and not done() and time.monotonic() < deadline:
            try:
                event = self._events.get(timeout=max(0.01, min(0.5, deadline - time.monotonic())))
            except queue.Empty:
                continue
            if event is None:
                self.ended = True
            else:
                self.seen(event["event"]).append(event)

    def wait_for(self, kind, count, timeout, abort_on=()):
        """Collects events until `count` of `kind` arrived, one of `abort_on` arrived, the output ended or
        timeout passed; returns the events of `kind` seen so far."""
        self.wait_until(lambda: len(self.seen(kind)) >= count or any(self.seen(k) for k in abort_on), timeout)
        return self.seen(kind)

    def send(self, line):
        """One line to every agent; False when the launcher no longer reads."""
        try:
            self.proc.stdin.write(line + "\n")
            self.proc.stdin.flush()
            return True
        except (BrokenPipeError, OSError, ValueError):
            return False

    def close_input(self):
        try:
            self.proc.stdin.close()
        except (BrokenPipeError, OSError, ValueError):
            pass

    def signal(self, sig):
        try:
            os.killpg(self.proc.pid, sig)
        except (ProcessLookupError, PermissionError):
            pass

    def wait_exit(self, timeout):
        try:
            self.proc.wait(timeout=timeout)
            return True
        except subprocess.TimeoutExpired:
            return False
