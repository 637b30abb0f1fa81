"""mpsbench-probe's command line and environment handling, with or without a GPU (tests/CMakeLists.txt: probe_cli).

MPSBENCH_PROBE names the built probe. Every case here gives the same result on
a GPU machine: options are read, and CUDA_MPS_ACTIVE_THREAD_PERCENTAGE is
checked, before any device is touched; a CUDA_VISIBLE_DEVICES that hides every
GPU leaves none on any machine.
"""
import json
import os
import subprocess
import unittest

PROBE = os.environ.get("MPSBENCH_PROBE", "")


class ProbeCli(unittest.TestCase):
    def setUp(self):
        self.assertTrue(os.access(PROBE, os.X_OK), f"MPSBENCH_PROBE='{PROBE}' is not an executable")

    def run_probe(self, *args, **env):
        environment = dict(os.environ)
        for key in ("CUDA_MPS_ACTIVE_THREAD_PERCENTAGE", *env):
            environment.pop(key, None)
        environment.update(env)
        return subprocess.run([PROBE, *args], capture_output=True, timeout=60, env=environment)

    def document(self, r):
        lines = r.stdout.decode().splitlines()
        self.assertEqual(len(lines), 1, r.stdout)
        doc = json.loads(lines[0])
        self.assertEqual(doc["tool"], "mpsbench-probe")
        return doc

    def test_help_exits_0_and_says_what_it_prints(self):
        for flag in ("--help", "-h"):
            r = self.run_probe(flag)
            self.assertEqual(r.returncode, 0, r.stderr)
            self.assertEqual(r.stderr, b"")
            self.assertTrue(r.stdout.startswith(b"usage: mpsbench-probe"), r.stdout)
            self.assertIn(b"one line of JSON", r.stdout)

    def test_version_is_one_line(self):
        r = self.run_probe("--version")
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertRegex(r.stdout.decode(), r"^mpsbench-probe \d+\.\d+\.\d+ \(git \S+\)\n$")

    def test_unknown_options_one_line_exit_2_no_json(self):
        for arg in ("--bogus", "-x", "0", "--gpus=0"):
            r = self.run_probe(arg)
            self.assertEqual(r.returncode, 2, r.stderr)
            self.assertEqual(r.stdout, b"")
            self.assertEqual(r.stderr.decode(), f"mpsbench-probe: error: unknown option '{arg}' (see --help)\n")

    def test_malformed_thread_percentage_is_bad_input_in_the_json(self):
        for value in ("12.5", "0", "101", "", "50%", os.fsdecode(b"\xff")):
            r = self.run_probe(CUDA_MPS_ACTIVE_THREAD_PERCENTAGE=value)
            self.assertEqual(r.returncode, 2, (value, r.stdout, r.stderr))
            doc = self.document(r)  # also for a value that is not UTF-8: still one parseable line
            self.assertEqual(doc["gpus"], [])
            self.assertIn("CUDA_MPS_ACTIVE_THREAD_PERCENTAGE=", doc["problem"])
            self.assertIn("is not a percentage in [1, 100]", doc["problem"])

    def test_no_visible_gpu_is_a_problem_not_an_error(self):
        for hidden in ("-1", "GPU-00000000-0000-0000-0000-000000000000"):
            r = self.run_probe(CUDA_VISIBLE_DEVICES=hidden)
            self.assertEqual(r.returncode, 0, r.stderr)
            doc = self.document(r)
            self.assertEqual(doc["gpus"], [])
            self.assertTrue(doc["problem"], doc)
            self.assertRegex(doc["cuda"]["driver_version"], r"^(none|\d+\.\d+)$")


if __name__ == "__main__":
    unittest.main()
