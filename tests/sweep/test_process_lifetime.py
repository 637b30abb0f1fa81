"""Nothing the sweep starts outlives it, and nothing a run starts outlives the run's window (issue 25).

SIGKILL gives the sweep no chance to clean up: what it started must end on its own (the keeper, the
farmer and each run ask for a signal when their parent dies). A farmed program's child in a session of
its own escapes process groups and sessions; the farmer is its subreaper and ends it.
"""
import os
import time
import unittest

from sweeptest import SweepTestCase, pid_alive, tagged_pids
from test_app import FAKE_APP, AppTestCase

GONE_WITHIN_S = 20


def cmdline(pid):
    try:
        with open(f"/proc/{pid}/cmdline", "rb") as f:
            return f.read().split(b"\0")
    except OSError:
        return []
  # the keeper's grace (5 s) and the farmer's (5 s), with room for a loaded machine


class SweepKilled(SweepTestCase):
    def wait_gone(self, pids):
        deadline = time.monotonic() + GONE_WITHIN_S
        while any(pid_alive(p) for p in pids) and time.monotonic() < deadline:
            time.sleep(0.1)
        return [p for p in pids if pid_alive(p)]

    def test_sigkill_of_the_sweep_ends_its_mpsbench_job(self):
        pid_dir = os.path.join(self.tmp, "pids")
        os.mkdir(pid_dir)
        proc = self.start_sweep(self.fake_args(modes="timeslice"), FAKE_JOB_HANG="timeslice",
                                FAKE_JOB_PID_DIR=pid_dir)
        self.wait_for_file(os.path.join(pid_dir, "timeslice.pids"), proc)
        with open(os.path.join(pid_dir, "timeslice.pids")) as f:
            job = [int(p) for p in f.read().split()]  # the fake mpirun's "rank" and its child
        proc.kill()
        proc.wait(timeout=30)  # not communicate(): what outlives the sweep may hold its output open
        proc.stdout.close()
        proc.stderr.close()
        self.assertEqual(self.wait_gone(job), [], "the job outlived the SIGKILLed sweep")


class SweepKilledMidWindow(AppTestCase):
    def test_sigkill_of_the_sweep_ends_the_farmer_and_a_hung_copy(self):
        proc = self.start_sweep(self.cpu_args(f"{FAKE_APP} --hang-on-run 1", ranks="2", min_time="1"))
        deadline = time.monotonic() + 30
        while not os.path.exists(os.path.join(self.app_dir, "copies.log")) or len(self.copies_log()) < 2:
            self.assertIsNone(proc.poll())
            self.assertLess(time.monotonic(), deadline, "the copies did not start")
            time.sleep(0.05)
        ours = [p for p in tagged_pids(self.tag) if p != proc.pid]
        proc.kill()
        proc.wait(timeout=30)  # not communicate(): what outlives the sweep may hold its output open
        proc.stdout.close()
        proc.stderr.close()
        deadline = time.monotonic() + GONE_WITHIN_S
        while any(pid_alive(p) for p in ours) and time.monotonic() < deadline:
            time.sleep(0.1)
        self.assertEqual([p for p in ours if pid_alive(p)], [], "the farmer or a copy outlived the sweep")


class FarmerKilled(AppTestCase):
    def test_the_runs_of_a_farmer_killed_outright_are_ended_by_its_keeper(self):
        proc = self.start_sweep(self.cpu_args(f"{FAKE_APP} --hang-on-run 1", "--timeout", "60", ranks="1"))
        deadline = time.monotonic() + 30
        while not os.path.exists(os.path.join(self.app_dir, "copies.log")):
            self.assertIsNone(proc.poll())
            self.assertLess(time.monotonic(), deadline, "the copy did not start")
            time.sleep(0.05)
        farmer = [p for p in tagged_pids(self.tag) if cmdline(p)[1:2] == [b"-c"]
                  and b"from mpsbench_sweep.app.farm import main" in cmdline(p)[2]]
        run = [p for p in tagged_pids(self.tag) if cmdline(p)[1:2] == [FAKE_APP.encode()]]
        self.assertEqual((len(farmer), len(run)), (1, 1))
        os.kill(farmer[0], 9)
        out, err = proc.communicate(timeout=60)
        self.assertEqual(proc.returncode, 1, err)
        self.assertFalse(pid_alive(run[0]), "the run outlived its farmer")
        self.assertIn("ended without reporting", self.results()[("timeslice", 1)]["error"])
        self.assert_clean()


class BackgroundChildren(AppTestCase):
    def test_a_child_in_its_own_session_runs_neither_into_the_next_window_nor_past_the_sweep(self):
        # One run per copy and window (a run outlasts --min-time); each leaves a setsid'd child for 60 s.
        r = self.sweep(self.cpu_args(f"{FAKE_APP} --sleep 0.3 --background 60", "--no-warmup", "--repetitions",
                                     "3", ranks="1", min_time="0.2"))
        self.assertEqual(r.returncode, 0, r.stderr)
        runs = self.copies_log()
        self.assertEqual([line["run"] for line in runs], ["1", "2", "3"])
        self.assertEqual([line["bg_alive"] for line in runs], ["0", "0", "0"],
                         "a child of an earlier window's run was still running")
        rec = self.results()[("timeslice", 1)]
        self.assertEqual(rec["app"]["left_running"], 3)
        self.assertIn("left 3 process(es) running", r.stderr)
        self.assert_clean()


if __name__ == "__main__":
    unittest.main()
