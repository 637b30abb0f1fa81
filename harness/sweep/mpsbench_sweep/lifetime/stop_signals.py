"""SIGTERM, SIGINT and SIGHUP raise Interrupted in the main thread, and a raise that Python drops is made again.

The sweep, the farmer and the guardian stop by raising Interrupted from their signal handlers. Python runs
a handler between two bytecodes of the main thread, and that may be inside a weakref callback or a
__del__ (threading's WeakSet as a thread object is collected, say). An exception cannot leave those:
Python prints "Exception ignored in ..." with a traceback and drops it, so the stop would be lost and a
traceback would reach the sweep's console (CI saw the farmer's, 2026-11-26). install() catches exactly
those drops in sys.unraisablehook, prints nothing, and runs the signal's handler (the one installed by
then) again RETRY_S later from SIGALRM, outside the callback; should that land in a callback too, the
same happens again.
"""
import signal
import sys

from ..jobs.outcome import Interrupted

STOP_SIGNALS = (signal.SIGINT, signal.SIGTERM, signal.SIGHUP)
RETRY_S = 0.01


def raise_interrupted(signum, frame):
    raise Interrupted(signum)


class StopOnce:
    """The handler of a helper that stops once and then cleans up (the guardian, the farmer): the first stop
    signal raises Interrupted; a later one, or any once `cleaning` is set, changes nothing. When the sweep
    dies its helpers see the end of their input and PR_SET_PDEATHSIG's SIGTERM almost together: a raise in
    the cleanup cut it short (CI, 2026-11-28: a guardian left its MPS daemon running). Set `cleaning = True`
    as the cleanup's first statement: a plain store calls nothing, so no handler runs before it takes effect.
    The sweep's own handler (signals.SignalGuard) is this one with its phases added."""

    def __init__(self):
        self.cleaning = False
        self._raised = False  # an Interrupted is on its way (reset when Python dropped it: it is raised again)

    def __call__(self, signum, frame):
        if self.cleaning or self._raised:
            return
        self.raise_now(signum)

    def raise_now(self, signum):
        self._raised = True
        raise Interrupted(signum)

    def _dropped(self, signum):
        self._raised = False  # Python dropped the raise: the retry raises it again

    def install(self):
        return install(self, self._dropped)


def install(handler=raise_interrupted, on_dropped=None):
    """handler for every stop signal, and the redelivery of the Interrupted it raises should Python drop it.
    on_dropped(signum) runs first (a handler that raises once, SignalGuard, is told its raise was lost).
    Returns a function that puts back the previous handlers and hook."""
    pending = []  # signals whose Interrupted was dropped; list appends and pops need no lock here

    def hook(unraisable):
        exc = unraisable.exc_value
        if not isinstance(exc, Interrupted):
            previous_hook(unraisable)
            return
        if on_dropped is not None:
            on_dropped(exc.signum)
        pending.append(exc.signum)
        signal.setitimer(signal.ITIMER_REAL, RETRY_S)  # a syscall: nothing here may take a lock

    def again(signum, frame):
        while pending:
            sig = pending.pop(0)
            current = signal.getsignal(sig)  # what obeys the signal now: a cleanup may ignore it by then
            if callable(current):
                current(sig, frame)

    previous_hook = sys.unraisablehook
    previous = {sig: signal.signal(sig, handler) for sig in STOP_SIGNALS}
    previous[signal.SIGALRM] = signal.signal(signal.SIGALRM, again)
    sys.unraisablehook = hook

    def restore():
        sys.unraisablehook = previous_hook
        for sig, old in previous.items():
            signal.signal(sig, old)

    return restore
