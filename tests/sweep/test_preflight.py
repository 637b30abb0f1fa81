"""Checks before any launch: a sweep that cannot work fails in seconds, with one line and exit status 2,
leaving nothing behind."""
import os
import unittest

from sweeptest import SweepTestCase


class Preflight(SweepTestCase):
    def check(self, args, message):
        r = self.sweep(args)
        self.assertEqual(r.returncode, 2, r.stderr)
        self.assertIn(message, r.stderr)
        self.assertEqual(len(r.stderr.strip().splitlines()), 1, r.stderr)
        self.assertFalse(os.path.exists(self.output) or os.path.exists(self.workdir), "nothing may start")

    def test_ranks_above_client_limit(self):
        self.check(self.fake_args(ranks="1,64"), "64 MPS clients per GPU requested, but an MPS server accepts at "
                                                 "most 48 per device")

    def test_explicit_client_limit(self):
        self.check(self.fake_args("--mps-client-limit", "2", modes="mps", ranks="4"), "at most 2 per device")

    def test_missing_mpsbench(self):
        args = self.fake_args()
        args[args.index("--mpsbench") + 1] = os.path.join(self.tmp, "no-such-mpsbench")
        self.check(args, "no-such-mpsbench' is not an executable file")

    def test_missing_control_program(self):
        args = self.fake_args()
        args[args.index("--mps-control") + 1] = os.path.join(self.tmp, "nvidia-cuda-mps-control")
        self.check(args, "modes mps, mps-qos need the MPS control program")

    def test_passthrough_mode_is_refused(self):
        self.check(self.fake_args("--", "--mode", "mps"), "--mode after --: the sweep sets it for every job")

    def test_passthrough_output_is_refused(self):
        self.check(self.fake_args("--", "--output=x.json"), "--output after --")

    def test_discard_throttled_needs_turns_off(self):
        # A job in turns has no GPU monitor (harness/measure/gpu_watch.hpp): nothing to judge throttling by.
        self.check(self.fake_args("--", "--discard-throttled", turns=None), "--discard-throttled after --: a job in "
                   "turns runs without the GPU monitor")
        r = self.sweep(self.fake_args("--", "--discard-throttled", modes="timeslice", ranks="1"))  # --turns off
        self.assertEqual(r.returncode, 0, r.stderr)

    def test_cpu_device_allows_only_streams(self):
        self.check(self.fake_args("--", "--device", "cpu"), "only --modes streams runs on the CPU device")

    def test_launcher_template_without_np(self):
        args = self.fake_args()
        args[args.index("--launcher") + 1] = "mpirun -n 4"
        self.check(args, "has none of {np}, {np_per_node}")


if __name__ == "__main__":
    unittest.main()
