"""End to end: the real mpsbench through the real mpirun, mode streams on the CPU device, in two rounds.

ctest passes MPSBENCH_SWEEP_TEST_MPSBENCH and MPSBENCH_SWEEP_TEST_MPIEXEC; run by
hand, build/mpsbench and mpirun on PATH are used (the test is skipped, saying
why, when the build is missing).
"""
import os
import shutil
import unittest

from sweeptest import REPO, SweepTestCase


class RealMpsbenchStreamsOnCpu(SweepTestCase):
    def setUp(self):
        super().setUp()
        self.mpsbench = os.environ.get("MPSBENCH_SWEEP_TEST_MPSBENCH") or os.path.join(REPO, "build", "mpsbench")
        mpiexec = os.environ.get("MPSBENCH_SWEEP_TEST_MPIEXEC") or shutil.which("mpirun")
        if "MPSBENCH_SWEEP_TEST_MPSBENCH" not in os.environ and not os.path.isfile(self.mpsbench):
            self.skipTest(f"{self.mpsbench} is not built")
        self.assertTrue(mpiexec and os.path.isfile(mpiexec), f"no MPI launcher ({mpiexec})")
        # --launcher mpirun looks up mpirun (or mpiexec) on PATH: put the configured one first.
        self.env["PATH"] = os.path.dirname(mpiexec) + os.pathsep + self.env.get("PATH", "")

    def test_streams_on_cpu_device_in_two_rounds(self):
        r = self.sweep(["--modes", "streams", "--ranks-per-gpu", "1,2", "--rounds", "2", "--launcher", "mpirun",
                        "--mpsbench", self.mpsbench, "--output", self.output, "--",
                        "--device", "cpu", "--kernel", "matmul", "--size", "24", "--min-time", "0.01",
                        "--warmup-time", "0.02", "--repetitions", "2"], timeout=300)
        self.assertEqual(r.returncode, 0, r.stdout + r.stderr)
        doc = self.merged()
        self.assertTrue(doc["complete"])
        results = doc["results"]
        self.assertEqual(sorted((x["precision"], x["ranks_per_gpu"], x["round"]) for x in results),
                         sorted((p, k, n) for p in ("fp32", "tf32", "bf16") for k in (1, 2) for n in (0, 1)))
        for x in results:
            self.assertEqual((x["mode"], x["device"], x["size"], x["instances_per_rank"]),
                             ("streams", "cpu", 24, x["ranks_per_gpu"]))
            self.assertTrue(x["verified"])
            self.assertGreater(x["aggregate"][x["primary_metric"]]["median"], 0)
        jobs = doc["context"]["sweep"]["jobs"]
        self.assertEqual([(j["round"], j["status"], j["exit_code"], j["np"]) for j in jobs],
                         [(0, "ok", 0, 1), (1, "ok", 0, 1)])
        self.assertIn("mpirun", jobs[0]["command"].split()[0])
        self.assertEqual(doc["context"]["sweep"]["rounds"], {"count": 2, "orders": [["streams"], ["streams"]]})
        self.assertEqual(doc["context"]["mpi"]["world_size"], 1)
        self.assertIn("--device cpu", " ".join(doc["context"]["argv"]))
        row = next(l for l in r.stdout.splitlines() if l.split()[:4] == ["matmul", "fp32", "24", "2"])
        self.assertRegex(row, r"FLOP/s .* yes$")
        self.assert_clean()


if __name__ == "__main__":
    unittest.main()
