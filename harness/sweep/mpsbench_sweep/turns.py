"""Turns: the jobs of a round run at once and take turns of one configuration (mpsbench --turns,
harness/runtime/turns.hpp; why: docs/measurement.md, "Turns").

The rule (TurnOrder): the turn goes out only when no job holds it and every job of the group that still
lives has asked for one, so nothing of another job runs while one works (its start-up included); to the
job that asks for the lowest (configuration, repetition) (so the modes' repetitions of a configuration
alternate, and every mode measures it before the next one), and among those in the group's order rotated
by one per step (each mode is first after the others' turns as often as the others). A job that ends (its connection closes, or the sweep sees its process end) is
taken out; if it held the turn, the turn is free again.

TurnHub serves the rule: one Unix socket per job in a private directory, one thread with a selector.
A line that is not of the protocol ends that job's part in the turns (its connection is closed, so its
mpsbench stops with a fatal line), never the hub.
"""
import os
import selectors
import shutil
import socket
import tempfile
import threading
import time

MAX_LINE = 64
SOCKET_PATH_MAX = 107  # sockaddr_un.sun_path holds 108 bytes with the terminating NUL


class TurnOrder:
    """Who gets the turn next; no sockets, no clock (the tests drive it directly)."""

    def __init__(self, names):
        self.order = list(names)
        self.asked = {}  # name -> the (configuration, step) it waits to work on
        self.holder = None
        self.ended = set()
        self.granted = {n: 0 for n in self.order}
        self.log = []  # (name, (configuration, step)) of every turn given, in order

    def want(self, name, index):
        if name in self.ended or name in self.asked or self.holder == name:
            raise ValueError(f"job {name} asked for a turn while it {'held one' if self.holder == name else 'waited'}")
        self.asked[name] = index

    def done(self, name):
        if self.holder != name:
            raise ValueError(f"job {name} gave back a turn it did not hold")
        self.holder = None

    def end(self, name):
        self.ended.add(name)
        self.asked.pop(name, None)
        if self.holder == name:
            self.holder = None

    def next(self):
        """The job that gets the turn now (it holds it from here on), or None."""
        if self.holder is not None:
            return None
        live = [n for n in self.order if n not in self.ended]
        if not live or any(n not in self.asked for n in live):
            return None
        lowest = min(self.asked[n] for n in live)
        first = sum(lowest) % len(self.order)
        name = min((n for n in live if self.asked[n] == lowest),
                   key=lambda n: (self.order.index(n) - first) % len(self.order))
        del self.asked[name]
        self.holder = name
        self.granted[name] += 1
        self.log.append((name, lowest))
        return name


def _private_dir():
    path = tempfile.mkdtemp(prefix="mpsb-turns-")
    if len(os.path.join(path, "0000000000.sock")) > SOCKET_PATH_MAX:  # a long TMPDIR
        os.rmdir(path)
        path = tempfile.mkdtemp(prefix="mpsb-turns-", dir="/tmp")
    return path


class TurnHub:
    """The turns of one group of jobs (names: their plan indices, in the group's order)."""

    def __init__(self, names):
        self.order = TurnOrder(names)
        self.dir = _private_dir()  # 0700: only this user's processes reach the sockets
        self.paths = {n: os.path.join(self.dir, f"{n}.sock") for n in names}
        self.waited = {n: 0.0 for n in names}  # seconds each job waited for its turns
        self.problems = {}                     # name -> why its connection was closed
        self._asked_at = {}
        self._conns = {}
        self._buffers = {}
        self._ends = []
        self._lock = threading.Lock()
        self._stopping = False
        self._sel = selectors.DefaultSelector()
        for name, path in self.paths.items():
            listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
            listener.bind(path)
            listener.listen(1)
            listener.setblocking(False)
            self._sel.register(listener, selectors.EVENT_READ, ("listen", name))
        self._wake_r, self._wake_w = os.pipe()
        self._sel.register(self._wake_r, selectors.EVENT_READ, ("wake", None))
        self._thread = threading.Thread(target=self._serve, name="turns", daemon=True)
        self._thread.start()

    def path(self, name):
        return self.paths[name]

    def end(self, name):
        """The sweep saw the job's process end (it may never have connected)."""
        with self._lock:
            self._ends.append(name)
        os.write(self._wake_w, b"e")

    def close(self):
        """Stops the hub, closes every socket and removes the directory; returns {name: record}."""
        with self._lock:
            self._stopping = True
        os.write(self._wake_w, b"s")
        self._thread.join()
        for key in list(self._sel.get_map().values()):
            self._sel.unregister(key.fileobj)
            if key.fileobj is not self._wake_r:
                key.fileobj.close()
        self._sel.close()
        os.close(self._wake_r)
        os.close(self._wake_w)
        shutil.rmtree(self.dir, ignore_errors=True)
        return {n: {"group": self.order.order, "turns": self.order.granted[n], "waited_s": round(self.waited[n], 3)}
                for n in self.order.order}

    # --- the hub's thread -----------------------------------------------------------------------
    def _serve(self):
        try:
            self._loop()
        except Exception as e:  # noqa: BLE001: a hub that stopped must not leave its jobs waiting for ever
            for name in list(self._conns):
                self._drop(name, f"the sweep's turn hub failed: {type(e).__name__}: {e}")
            raise

    def _loop(self):
        while True:
            for key, _ in self._sel.select():
                kind, name = key.data
                if kind == "wake":
                    os.read(self._wake_r, 64)
                elif kind == "listen":
                    self._accept(key.fileobj, name)
                else:
                    self._read(key.fileobj, name)
            with self._lock:
                if self._stopping:
                    return
                ends, self._ends = self._ends, []
            for name in ends:
                self._drop(name, None)
            self._grant()

    def _accept(self, listener, name):
        try:
            conn, _ = listener.accept()
        except OSError:
            return
        self._sel.unregister(listener)  # one connection per job: its rank 0
        listener.close()
        if name in self.order.ended:
            conn.close()
            return
        conn.setblocking(False)
        self._conns[name] = conn
        self._buffers[name] = b""
        self._sel.register(conn, selectors.EVENT_READ, ("conn", name))

    def _read(self, conn, name):
        try:
            data = conn.recv(4096)
        except OSError:
            data = b""
        if not data:
            self._drop(name, None)
            return
        buffer = self._buffers[name] + data
        *lines, rest = buffer.split(b"\n")
        self._buffers[name] = rest
        try:
            if len(rest) > MAX_LINE:
                raise ValueError("a line longer than the protocol's")
            for line in lines:
                self._line(name, line.decode("ascii", "replace").strip())
        except ValueError as e:
            self._drop(name, str(e))

    def _line(self, name, line):
        word, _, value = line.partition(" ")
        if word == "want":
            index = tuple(int(v) for v in value.split())  # ValueError: not numbers
            if len(index) != 2:
                raise ValueError(f"{line[:MAX_LINE]!r} does not name a configuration and a step")
            self.order.want(name, index)
            self._asked_at[name] = time.monotonic()
        elif word == "done" and not value:
            self.order.done(name)
        else:
            raise ValueError(f"{line[:MAX_LINE]!r} is not a line of the turns protocol")

    def _drop(self, name, problem):
        if name in self.order.ended:
            return
        self.order.end(name)
        if problem:
            self.problems[name] = problem
        conn = self._conns.pop(name, None)
        if conn is not None:
            self._sel.unregister(conn)
            conn.close()

    def _grant(self):
        while True:
            name = self.order.next()
            if name is None:
                return
            asked = self._asked_at.pop(name, None)
            if asked is not None:
                self.waited[name] += time.monotonic() - asked
            try:
                self._conns[name].sendall(b"go\n")
            except (OSError, KeyError):
                self._drop(name, "the job's connection broke")
