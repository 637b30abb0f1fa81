"""SIGINT, SIGTERM and SIGHUP during a sweep: an exception at a safe point, then a cleanup that finishes.

A signal raises Interrupted in the main thread, except while a process is being started and recorded
(deferred()): it is held until the process is known, so nothing the sweep starts can escape the
cleanup. Once the cleanup begins (cleaning_up()), signals are noted and not obeyed, so the cleanup
always finishes; the exit status is still 128 + the first signal. A raise that Python dropped (inside a
garbage collector's callback) is raised again (lifetime.stop_signals).
"""
import signal
from contextlib import contextmanager

from .jobs.outcome import Interrupted
from .lifetime import stop_signals
from .text import say


class SignalGuard:
    def __init__(self):
        self.signal = None     # the first signal received
        self._raised = False
        self._defer = 0

    def _on_signal(self, signum, frame):
        if self.signal is None:
            self.signal = signum
        if self._raised:
            say(f"{signal.Signals(signum).name} received: still cleaning up, please wait")
            return
        if self._defer == 0:
            self._raised = True
            raise Interrupted(signum)

    def _dropped(self, signum):
        """Python dropped the Interrupted raised for signum: it is raised again, so not raised yet."""
        self._raised = False

    @contextmanager
    def installed(self):
        restore = stop_signals.install(self._on_signal, self._dropped)
        try:
            yield self
        finally:
            restore()

    @contextmanager
    def deferred(self):
        """Signals arriving inside are raised at its end: a process is never started without being recorded."""
        self._defer += 1
        try:
            yield
        finally:
            self._defer -= 1
        if self._defer == 0 and self.signal is not None and not self._raised:
            self._raised = True
            raise Interrupted(self.signal)

    def cleaning_up(self):
        """From here on signals are noted, not raised."""
        self._raised = True
