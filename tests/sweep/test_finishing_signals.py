"""A stop signal at any step of the sweep's finishing (issue 36): the exit status, the results file's
context.sweep.exit_code and the console agree, and nothing prints a traceback.

The sweep runs through DRIVER, which wraps one named step of the finishing and sends the sweep the signal
there with signal.raise_signal (its handler runs before raise_signal returns: no timing involved). Before
the results are written for the last time the signal makes the status 128 + signal, in the file too;
after that the status on record stands and the console says so.
"""
import json
import os
import signal
import subprocess
import sys
import unittest

from sweeptest import PACKAGE_PATH, SweepTestCase

DRIVER = r"""
import atexit, os, signal, sys
from mpsbench_sweep import cli, runner, workdir
from mpsbench_sweep.daemon import lifecycle

point, sig = sys.argv[1], getattr(signal, sys.argv[2])
state = {"fired": False, "cleanup": False}

def fire(name):
    if name == point and not state["fired"]:
        state["fired"] = True
        print(f"driver: {sys.argv[2]} at {name}", file=sys.stderr, flush=True)
        signal.raise_signal(sig)

def wrap(owner, attr, name, when=lambda *a, **k: True, after=False):
    original = getattr(owner, attr)
    def wrapped(*a, **k):
        if not after and when(*a, **k):
            fire(name)
        result = original(*a, **k)
        if after and when(*a, **k):
            fire(name)
        return result
    setattr(owner, attr, wrapped)

def final(self, exit_code=None, final=False):
    return final

def cleanup_starts(self):
    state["cleanup"] = True
    return True

wrap(runner.Runner, "__init__", "plan")
wrap(runner.Runner, "_run_jobs", "after-jobs", after=True)
wrap(runner.Runner, "_cleanup", "cleanup", when=cleanup_starts)
wrap(lifecycle.DaemonLifecycle, "stop", "cleanup-daemon-stop",
     when=lambda self: state["cleanup"] and self.guardian is not None)
wrap(runner.Runner, "_merge", "last-merge", when=final)
wrap(runner.Runner, "_merge", "after-last-merge", when=final, after=True)
wrap(runner.Runner, "_report", "report")
wrap(workdir.WorkdirLock, "release", "output-lock", when=lambda self: self.path is not None and self.fd is not None)
wrap(workdir.WorkdirLock, "release", "workdir-lock", when=lambda self: self.path is None and self.fd is not None)
atexit.register(fire, "exit")  # registered first, so it runs after the sweep's own: at shutdown
sys.exit(cli.main(sys.argv[3:]))
"""


class FinishingSignals(SweepTestCase):
    def finish_with(self, point, sig, **env):
        """The sweep (timeslice and mps, one rank) with sig at point: (exit status, stderr, exit_code in the file)."""
        self.env.update(env, PYTHONPATH=os.pathsep.join(PACKAGE_PATH))
        r = subprocess.run([sys.executable, "-c", DRIVER, point, sig.name]
                           + self.fake_args(modes="timeslice,mps", ranks="1"),
                           env=self.env, capture_output=True, text=True, timeout=90, cwd=self.tmp)
        self.assertIn(f"driver: {sig.name} at {point}", r.stderr, "the signal was not sent")
        for bad in ("Traceback", "Exception ignored", "Error"):
            self.assertNotIn(bad, r.stderr)
        self.assertEqual(self.merged()["context"]["sweep"]["exit_code"], r.returncode, r.stderr)
        with open(os.path.join(self.workdir, "sweep.json")) as f:
            self.assertEqual(json.load(f)["exit_code"], r.returncode)
        self.assertFalse(os.path.exists(os.path.join(self.tmp, ".out.json.lock")), "the output's lock file is left")
        self.assert_clean()
        return r.returncode, r.stderr

    def assert_recorded(self, point, sig, **env):
        """A signal before the status is on record: 128 + signal, said on the console."""
        code, err = self.finish_with(point, sig, **env)
        self.assertEqual(code, 128 + sig)
        self.assertTrue(f"{sig.name} received: finishing the cleanup first, then exiting with status {code}" in err
                        or f"interrupted by {sig.name}" in err, err)
        return err

    def assert_stands(self, point, sig):
        """A signal once the status is on record: it stands (0: every job ran and verified)."""
        code, err = self.finish_with(point, sig)
        self.assertEqual(code, 0, err)
        return err

    def test_while_the_sweep_plans(self):
        """After the locks are taken, before the runner handles signals itself: one line, 128 + signal, nothing
        started or written, both locks released."""
        self.env.update(PYTHONPATH=os.pathsep.join(PACKAGE_PATH))
        r = subprocess.run([sys.executable, "-c", DRIVER, "plan", "SIGTERM"]
                           + self.fake_args(modes="timeslice,mps", ranks="1"),
                           env=self.env, capture_output=True, text=True, timeout=90, cwd=self.tmp)
        self.assertEqual(r.returncode, 128 + signal.SIGTERM, r.stderr)
        self.assertNotIn("Traceback", r.stderr)
        self.assertIn("mpsbench-sweep: interrupted by SIGTERM before the first job; nothing was started", r.stderr)
        self.assertFalse(os.path.exists(self.output))
        self.assertFalse(os.path.exists(os.path.join(self.tmp, ".out.json.lock")), "the output's lock file is left")
        self.assert_clean()

    def test_between_the_last_job_and_the_cleanup(self):
        self.assertIn("interrupted by SIGTERM", self.assert_recorded("after-jobs", signal.SIGTERM))

    def test_as_the_cleanup_starts(self):
        self.assert_recorded("cleanup", signal.SIGTERM)

    def test_while_the_cleanup_stops_the_daemon_after_a_crash(self):
        """The crash's status 3 gives way to the signal's, as the console says."""
        err = self.assert_recorded("cleanup-daemon-stop", signal.SIGINT, FAKE_JOB_CRASH="mps")
        self.assertIn("error: ", err)
        self.assertEqual(self.merged()["context"]["sweep"]["jobs"][1]["status"], "failed")

    def test_before_the_last_write(self):
        self.assert_recorded("last-merge", signal.SIGHUP)

    def test_after_the_last_write_before_the_status_is_on_record(self):
        """The file is written again with the signal's status."""
        self.assert_recorded("after-last-merge", signal.SIGTERM)

    def test_while_the_table_is_printed(self):
        err = self.assert_stands("report", signal.SIGTERM)
        self.assertIn("SIGTERM received after the results were written: exiting with status 0, as recorded there",
                      err)

    def test_while_the_output_lock_is_released(self):
        self.assertIn("exiting with status 0, as recorded there", self.assert_stands("output-lock", signal.SIGTERM))

    def test_while_the_work_directory_lock_is_released(self):
        self.assertIn("exiting with status 0, as recorded there", self.assert_stands("workdir-lock", signal.SIGINT))

    def test_at_interpreter_shutdown(self):
        self.assert_stands("exit", signal.SIGTERM)


if __name__ == "__main__":
    unittest.main()
