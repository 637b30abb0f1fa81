"""The sweep's own record of itself (issue 28): the command that made the file, where the time went (from the
engine's per-configuration timing), each part file read once, and the energy columns of mpsbench's results."""
import os
import shlex
import unittest

from sweeptest import SWEEP, SweepTestCase

import mpsbench_sweep.merge as merge_module  # noqa: E402
from mpsbench_sweep import time_profile  # noqa: E402


class Profile(SweepTestCase):
    def test_command_profile_and_energy_columns(self):
        args = self.fake_args(modes="timeslice,mps,streams", ranks="1,2")
        r = self.sweep(args, FAKE_JOB_TIMING="1", FAKE_JOB_ENERGY="1")
        self.assertEqual(r.returncode, 0, r.stderr)
        sweep = self.merged()["context"]["sweep"]
        self.assertEqual(shlex.split(sweep["command"]), [SWEEP] + args)
        prof = sweep["time_profile"]
        self.assertEqual([j["label"] for j in prof["jobs"]], ["timeslice", "mps", "streams"])
        for job in prof["jobs"]:
            # Two results per job, each 0.6 s of windows and 0.2 s of warm-up; the engine's clock saw 2.1 s.
            self.assertAlmostEqual(job["windows_s"], 1.2)
            self.assertAlmostEqual(job["warmup_s"], 0.4)
            self.assertAlmostEqual(job["outside_s"], job["wall_s"] - 1.6)
            self.assertAlmostEqual(job["process_start_s"], job["wall_s"] - 2.1)
            self.assertGreaterEqual(job["merge_s"], 0.0)
        self.assertGreater(prof["daemon_start_s"], 0.0)
        parts = prof["total_s"] - sum(j["wall_s"] for j in prof["jobs"])
        self.assertAlmostEqual(prof["daemon_start_s"] + prof["daemon_stop_s"] + prof["merge_s"]
                               + prof["between_jobs_s"], parts, delta=0.01)
        lines = r.stdout.splitlines()
        head = next(i for i, line in enumerate(lines) if line.startswith("where the time went (s):"))
        self.assertEqual(lines[head + 1].split(), ["job", "wall", "windows", "warm-up", "outside", "outside",
                                                   "%", "process", "start"])
        self.assertEqual(lines[head + 2].split()[:4], ["timeslice", f"{prof['jobs'][0]['wall_s']:.1f}", "1.2", "0.4"])
        # J per FLOP = 300 W / the aggregate: timeslice at k=2 does 2 TFLOP/s -> 150 J/TFLOP; mps 3 -> 100.
        energy = next(i for i, line in enumerate(lines) if line.startswith("energy and SM activity"))
        row = next(line.split() for line in lines[energy:] if line.startswith("matmul") and line.split()[3] == "2")
        self.assertEqual(row, ["matmul", "fp32", "64", "2", "150", "J/TFLOP", "100", "J/TFLOP", "75.0", "J/TFLOP",
                               "40%", "80%", "80%"])

    def test_each_part_file_is_read_once(self):
        reads = []
        original = merge_module.load_part

        def counting(path):
            reads.append(os.path.basename(path))
            return original(path)

        from mpsbench_sweep import runner  # noqa: E402
        from mpsbench_sweep.plan import Job  # noqa: E402
        fake = runner.Runner.__new__(runner.Runner)
        fake.parts = {}
        merge_module.load_part = counting
        try:
            part = os.path.join(self.tmp, "part-timeslice.json")
            with open(part, "w") as f:
                f.write('{"schema": "mpsbench-results", "schema_version": 3, "context": {}, "results": []}')
            job = Job(0, "timeslice", (1,), 1, None, "part-timeslice.json")
            for _ in range(5):
                self.assertIsNotNone(fake._part(job, {"part_file": part}))
            self.assertEqual(reads, ["part-timeslice.json"])
            with open(part, "a") as f:
                f.write("\n")
            fake._part(job, {"part_file": part})
            self.assertEqual(len(reads), 2, "a part that changed is read again")
        finally:
            merge_module.load_part = original


class Arithmetic(unittest.TestCase):
    def test_jobs_without_timing_show_dashes(self):
        prof = time_profile.profile([{"label": "mps", "wall_s": 10.0}], {0: {}}, {0: 0.5}, [{"start_s": 1.0}], 20.0)
        self.assertEqual(prof["jobs"][0]["outside_s"], None)
        self.assertEqual(prof["between_jobs_s"], 8.5)
        text = "\n".join(time_profile.lines(prof))
        self.assertIn("\nmps  10.0        -        -        -          -              -\n", text)


if __name__ == "__main__":
    unittest.main()
