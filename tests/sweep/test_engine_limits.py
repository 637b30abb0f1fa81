"""Every limit mpsbench enforces holds in the sweep too, checked before anything starts (exit 2, one line), and
the sweep's options cannot be overridden by what goes after -- (issue 25)."""
import json
import os
import unittest

from sweeptest import OneLine, SweepTestCase
from test_app import AppTestCase


class EngineLimits(OneLine, SweepTestCase):
    def mix(self, spec):
        return [a for a in self.fake_args(modes="timeslice,mps") if a not in ("--ranks-per-gpu", "1,2,4")] + [
            "--", "--mix", spec]

    def test_what_mpsbench_refuses_the_sweep_refuses_before_any_job(self):
        self.refused(self.mix("matmul:1025,inference:1"), "[1, 1024]")
        self.refused(self.mix("matmul:4"), "a mix needs at least two")
        self.refused(self.fake_args("--", "--gpus", "0,0"), "listed twice")
        self.refused(self.fake_args("--", "--device", "tpu"), "unknown device 'tpu'")
        self.refused(self.fake_args("--", "--resume", "old.json"), "--resume after --")
        self.assertFalse(os.path.exists(self.workdir), "nothing may start")

    def test_gpus_by_uuid_as_mpsbench_takes_them(self):
        r = self.sweep(self.fake_args("--", "--gpus", "GPU-0a1b2c3d", modes="timeslice", ranks="1"))
        self.assertEqual(r.returncode, 0, r.stderr)

    def test_the_options_the_sweep_owns_come_last(self):
        # mpsbench expands a --preset in place and the later flag wins: the sweep's own options must follow
        # everything given after --, or a preset naming --mode or --output would override them.
        log = os.path.join(self.tmp, "env.log")
        r = self.sweep(self.fake_args("--", "--size", "64", modes="timeslice", ranks="1"), FAKE_JOB_ENV_LOG=log)
        self.assertEqual(r.returncode, 0, r.stderr)
        with open(log) as f:
            argv = json.loads(f.readline())["argv"]
        self.assertEqual(argv[-6:-1], ["--mode", "timeslice", "--ranks-per-gpu", "1", "--output"])


class AppWindow(OneLine, AppTestCase):
    def test_window_longer_than_mpsbench_allows(self):
        self.refused(self.cpu_args("sleep 0.1", min_time="3601"), "--min-time", "(0, 3600]")
        self.refused(self.cpu_args("sleep 0.1", "--repetitions", "1001"), "--repetitions")


if __name__ == "__main__":
    unittest.main()
