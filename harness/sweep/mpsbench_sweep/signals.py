"""SIGINT, SIGTERM and SIGHUP during a sweep: an exception at a safe point, a cleanup that finishes, and one
exit status that the results file, the console and the process agree on, whenever the signal comes.

Three phases:
- jobs: a signal raises Interrupted in the main thread, except while a process is being started and
  recorded (deferred()): it is held until the process is known, so nothing the sweep starts can escape
  the cleanup. A raise that Python dropped (inside a garbage collector's callback) is raised again
  (lifetime.stop_signals).
- cleaning (from `cleaning = True` until the results file is written for the last time): signals are
  noted, never raised, so the cleanup always finishes; the exit status is 128 + the first signal
  received, in the file and of the process, and the console says so when the signal comes.
- finished (settle() wrote the file with its status): the status is on record and stays; a later signal
  (while the table is printed, the locks are released, the interpreter shuts down) is told so on the
  console and changes nothing. The handler stays installed after the guard is left, and at exit the
  stop signals are ignored: Python's shutdown would otherwise put back the default action, and a signal
  then would end the process with a status the file contradicts.
The handler writes with os.write, never print(): it may run while the main thread is inside a print to
the same stream, and Python's buffered streams refuse a reentrant call with an exception.
"""
import atexit
import os
import signal
from contextlib import contextmanager

from .lifetime import stop_signals


def note(message):
    """One line on stderr from a signal handler: a plain write of its bytes (no buffer, no lock)."""
    data = f"mpsbench-sweep: {message}\n".encode()
    try:
        while data:
            data = data[os.write(2, data):]
    except OSError:
        pass  # stderr closed or gone: the line is lost, the status is not


def _ignore_stop_signals():
    """At exit: the status is on record; nothing may end the process with another (see the module's text)."""
    signal.setitimer(signal.ITIMER_REAL, 0)  # no redelivery of a dropped raise either
    for sig in stop_signals.STOP_SIGNALS + (signal.SIGALRM,):
        signal.signal(sig, signal.SIG_IGN)


class SignalGuard(stop_signals.StopOnce):
    """StopOnce (raise once; nothing while `cleaning`; a dropped raise is raised again) with the sweep's
    phases: held while deferred(), noted while cleaning, told after the status is on record."""

    def __init__(self):
        super().__init__()  # `cleaning` is set by the runner as a plain attribute: that calls nothing, so no
                            # handler runs between the last job's end and the cleanup's start
        self.signal = None     # the first signal received before the status was on record
        self.final = None      # the exit status on record, once settle() wrote it
        self._defer = 0

    def __call__(self, signum, frame):
        name = signal.Signals(signum).name
        if self.final is not None:
            note(f"{name} received after the results were written: exiting with status {self.final}, as "
                 "recorded there")
            return
        if self.signal is None:
            self.signal = signum
        if self.cleaning or self._raised:
            note(f"{name} received: finishing the cleanup first, then exiting with status {128 + self.signal}")
            return
        if self._defer == 0:
            self.raise_now(signum)

    @contextmanager
    def installed(self):
        restore = self.install()
        try:
            yield self
        finally:
            if self.final is None:
                restore()
            else:  # keep answering late signals until the process ends (see the module's text)
                atexit.register(_ignore_stop_signals)

    @contextmanager
    def deferred(self):
        """Signals arriving inside are raised at its end: a process is never started without being recorded."""
        self._defer += 1
        try:
            yield
        finally:
            self._defer -= 1
        if self._defer == 0 and self.signal is not None and not (self._raised or self.cleaning):
            self.raise_now(self.signal)

    def status(self, code):
        """The exit status: 128 + the first signal received, else code."""
        return code if self.signal is None else 128 + self.signal

    def settle(self, code, write):
        """Writes the results for the last time and puts the exit status on record: write(status) writes the file
        with status and returns the status as it then stands (a failed write may raise it). A signal during
        the write makes the status 128 + signal: the file is written again with it. Returns the status."""
        seen = self.signal
        self.final = write(self.status(code))
        if self.signal != seen:  # it came before `final` was set: not late, so the file must say it
            self.final = self.status(code)
            self.final = write(self.final)
        return self.final
