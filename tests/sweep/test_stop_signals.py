"""A stop signal whose handler runs inside a garbage collector's callback still stops the process, and
prints nothing (lifetime.stop_signals; CI saw the farmer's stop dropped with a traceback, 2026-11-26)."""
import os
import subprocess
import sys
import textwrap
import unittest

from sweeptest import PACKAGE_PATH

# The signal is sent from inside a weakref callback, so its Python handler runs in there.
SCENARIO = """
import os, signal, sys, time, weakref
from mpsbench_sweep.jobs.outcome import Interrupted
from mpsbench_sweep.lifetime import stop_signals
from mpsbench_sweep.signals import SignalGuard

class Referent:
    pass

def in_a_callback(_):
    os.kill(os.getpid(), signal.SIGTERM)
    for _ in range(100000):
        pass

def drop_and_wait():
    referent = Referent()
    ref = weakref.ref(referent, in_a_callback)
    del referent
    deadline = time.monotonic() + 3
    while time.monotonic() < deadline:
        time.sleep(0.001)
    print("not stopped", flush=True)

{setup}
try:
    drop_and_wait()
except Interrupted as e:
    print("stopped by", e.signum, flush=True)
"""


def scenario(setup):
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(PACKAGE_PATH))
    code = textwrap.dedent(SCENARIO).replace("{setup}", textwrap.dedent(setup))
    return subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=30)


class StopSignals(unittest.TestCase):
    def test_python_drops_a_raise_inside_a_callback(self):
        """What the module is for: a plain raising handler loses the stop and prints a traceback."""
        r = scenario("signal.signal(signal.SIGTERM, stop_signals.raise_interrupted)")
        self.assertIn("not stopped", r.stdout)
        self.assertIn("Exception ignored", r.stderr)

    def test_the_dropped_stop_is_raised_again_and_nothing_printed(self):
        r = scenario("stop_signals.install()")
        self.assertEqual(r.stdout, "stopped by 15\n", r.stderr)
        self.assertEqual(r.stderr, "")

    def test_the_sweeps_guard_raises_its_dropped_stop_again(self):
        r = scenario("installed = SignalGuard().installed()\ninstalled.__enter__()")
        self.assertEqual(r.stdout, "stopped by 15\n", r.stderr)
        self.assertEqual(r.stderr, "")

    def test_a_helpers_dropped_stop_is_raised_again(self):
        r = scenario("stop_signals.StopOnce().install()")
        self.assertEqual(r.stdout, "stopped by 15\n", r.stderr)
        self.assertEqual(r.stderr, "")

    def test_a_helper_stops_once_and_its_cleanup_finishes(self):
        """The guardian and the farmer: a second signal, or one once the cleanup began, raises nothing (when the
        sweep dies, the end of their input and PR_SET_PDEATHSIG's SIGTERM come almost together)."""
        code = textwrap.dedent("""
            import os, signal
            from mpsbench_sweep.jobs.outcome import Interrupted
            from mpsbench_sweep.lifetime import stop_signals

            def signalled(sig):
                os.kill(os.getpid(), sig)
                for _ in range(100000):  # the handler runs between two bytecodes
                    pass

            for first in (True, False):  # stopped by a signal first, or by the end of its input
                stop = stop_signals.StopOnce()
                restore = stop.install()
                try:
                    if first:
                        signalled(signal.SIGTERM)
                    print("not stopped", flush=True)
                except Interrupted as e:
                    print("stopped by", e.signum, flush=True)
                finally:
                    stop.cleaning = True
                    signalled(signal.SIGHUP)
                    signalled(signal.SIGINT)
                    print("cleaned up", flush=True)
                restore()
        """)
        env = dict(os.environ, PYTHONPATH=os.pathsep.join(PACKAGE_PATH))
        r = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=30)
        self.assertEqual(r.stdout.splitlines(), ["stopped by 15", "cleaned up", "not stopped", "cleaned up"],
                         r.stderr)
        self.assertEqual(r.stderr, "")

    def test_a_signal_ignored_by_the_time_of_the_retry_is_not_raised(self):
        """A cleanup that ignores stop signals is not cut short by the retry."""
        r = scenario("""
            stop_signals.install()
            real_sleep = time.sleep
            def sleep_then_ignore(s):
                signal.signal(signal.SIGTERM, signal.SIG_IGN)
                real_sleep(s)
            time.sleep = sleep_then_ignore
        """)
        self.assertEqual(r.stdout, "not stopped\n", r.stderr)
        self.assertEqual(r.stderr, "")

    def test_other_ignored_exceptions_are_still_printed(self):
        r = scenario("""
            stop_signals.install()
            class Broken:
                def __del__(self):
                    raise ValueError("from __del__")
            Broken()
        """)
        self.assertIn("ValueError: from __del__", r.stderr)
        self.assertIn("stopped by 15", r.stdout)


if __name__ == "__main__":
    unittest.main()
