"""A work directory belongs to one sweep at a time; --output never names a file the sweep itself uses there."""
import os
import unittest

from sweeptest import SweepTestCase


class TwoSweepsOneDirectory(SweepTestCase):
    def test_the_second_sweep_refuses_with_one_line(self):
        pid_dir = os.path.join(self.tmp, "pids")
        os.mkdir(pid_dir)
        first = self.start_sweep(self.fake_args(modes="timeslice"), FAKE_JOB_HANG="timeslice", FAKE_JOB_PID_DIR=pid_dir)
        try:
            self.wait_for_file(os.path.join(pid_dir, "timeslice.pids"), first)
            other = os.path.join(self.tmp, "other.json")
            args = self.fake_args("--workdir", self.workdir, modes="timeslice")
            args[args.index("--output") + 1] = other
            r = self.sweep(args)
            self.assertEqual(r.returncode, 2, r.stderr)
            self.assertEqual(len(r.stderr.strip().splitlines()), 1, r.stderr)
            self.assertIn(f"another mpsbench-sweep (pid {first.pid}) is using", r.stderr)
            self.assertFalse(os.path.exists(other))
            self.assertIsNone(first.poll(), "the first sweep goes on")
        finally:
            first.terminate()
            first.communicate(timeout=60)
        self.assert_clean()

    def test_a_finished_sweep_leaves_no_lock_behind(self):
        self.assertEqual(self.sweep(self.fake_args(modes="timeslice", ranks="1")).returncode, 0)
        r = self.sweep(self.fake_args(modes="timeslice", ranks="1"))
        self.assertEqual(r.returncode, 0, r.stderr)

    def test_a_planted_link_as_lock_file_is_refused(self):
        os.mkdir(self.workdir, 0o755)
        victim = os.path.join(self.tmp, "victim")
        with open(victim, "w") as f:
            f.write("keep\n")
        os.symlink(victim, os.path.join(self.workdir, ".mpsbench-sweep.lock"))
        r = self.sweep(self.fake_args(modes="timeslice", ranks="1"))
        self.assertEqual(r.returncode, 2, r.stderr)
        self.assertIn("a symbolic link", r.stderr)
        with open(victim) as f:
            self.assertEqual(f.read(), "keep\n")


class TwoSweepsOneOutput(SweepTestCase):
    """Different work directories, the same --output: the second sweep refuses (a lock beside the output)."""

    def test_the_second_sweep_refuses_and_the_lock_goes_with_the_first(self):
        pid_dir = os.path.join(self.tmp, "pids")
        os.mkdir(pid_dir)
        first = self.start_sweep(self.fake_args(modes="timeslice"), FAKE_JOB_HANG="timeslice", FAKE_JOB_PID_DIR=pid_dir)
        lock = os.path.join(self.tmp, ".out.json.lock")
        try:
            self.wait_for_file(os.path.join(pid_dir, "timeslice.pids"), first)
            self.assertTrue(os.path.isfile(lock))
            r = self.sweep(self.fake_args("--workdir", os.path.join(self.tmp, "other-work"), modes="timeslice"))
            self.assertEqual(r.returncode, 2, r.stderr)
            self.assertEqual(len(r.stderr.strip().splitlines()), 1, r.stderr)
            self.assertIn(f"--output: another mpsbench-sweep (pid {first.pid}) is writing", r.stderr)
            self.assertEqual(os.listdir(os.path.join(self.tmp, "other-work")), [".mpsbench-sweep.lock"],
                             "the second sweep ran nothing")
            self.assertIsNone(first.poll(), "the first sweep goes on")
        finally:
            first.terminate()
            first.communicate(timeout=60)
        self.assertFalse(os.path.lexists(lock), "the first sweep removes its lock file when it is done")
        r = self.sweep(self.fake_args("--workdir", os.path.join(self.tmp, "other-work"), modes="timeslice", ranks="1"),
                       FAKE_JOB_HANG="")
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertFalse(os.path.lexists(lock))
        self.assert_clean()

    def test_a_planted_link_beside_the_output_is_refused(self):
        victim = os.path.join(self.tmp, "victim")
        with open(victim, "w") as f:
            f.write("keep\n")
        os.symlink(victim, os.path.join(self.tmp, ".out.json.lock"))
        r = self.sweep(self.fake_args(modes="timeslice", ranks="1"))
        self.assertEqual(r.returncode, 2, r.stderr)
        self.assertEqual(len(r.stderr.strip().splitlines()), 1, r.stderr)
        self.assertIn("a symbolic link, not the sweep's lock file for the results file", r.stderr)
        with open(victim) as f:
            self.assertEqual(f.read(), "keep\n")
        self.assertFalse(os.path.exists(self.output))


class OutputInsideTheWorkDirectory(SweepTestCase):
    def check(self, output):
        args = self.fake_args("--workdir", self.workdir, modes="timeslice", ranks="1")
        args[args.index("--output") + 1] = output
        r = self.sweep(args)
        self.assertEqual(r.returncode, 2, (output, r.stderr))
        self.assertEqual(len(r.stderr.strip().splitlines()), 1, r.stderr)
        self.assertIn("is a file the sweep itself writes in its work directory", r.stderr)
        self.assertFalse(os.path.exists(output), output)

    def test_files_of_the_sweep_are_refused(self):
        for name in ("sweep.json", "part-timeslice.json", "part-timeslice.log", ".mpsbench-sweep.lock",
                     os.path.join("app-runs", "x.json"), os.path.join("mps-logs-mps", "h.json")):
            self.check(os.path.join(self.workdir, name))
        # The same file through another spelling of the directory.
        os.symlink(self.workdir, os.path.join(self.tmp, "alias"))
        self.check(os.path.join(self.tmp, "alias", "sweep.json"))

    def test_another_name_in_the_work_directory_is_fine(self):
        os.mkdir(self.workdir)
        output = os.path.join(self.workdir, "merged.json")
        args = self.fake_args("--workdir", self.workdir, modes="timeslice", ranks="1")
        args[args.index("--output") + 1] = output
        r = self.sweep(args)
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertTrue(os.path.isfile(output))


if __name__ == "__main__":
    unittest.main()
