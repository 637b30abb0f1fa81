"""examples/mpi_rate.py, an MPI Python program that reports its own rate, alone and farmed with
`--app-launcher mpirun --app-metric` on the CPU device (NumPy, or plain Python without it).

Skipped, saying why, where the python3 running the tests has no mpi4py or there is no MPI launcher (ctest passes
MPSBENCH_SWEEP_TEST_MPIEXEC; by hand, mpirun on PATH)."""
import os
import shutil
import subprocess
import sys

from sweeptest import REPO, SweepTestCase

EXAMPLE = os.path.join(REPO, "examples", "mpi_rate.py")
CHECK = os.path.join(REPO, "examples", "check_output.sh")
SMALL = ["--device", "cpu", "--size", "32", "--steps", "20"]


def has_mpi4py():
    return subprocess.run([sys.executable, "-c", "import mpi4py"], capture_output=True).returncode == 0


class MpiExample(SweepTestCase):
    def setUp(self):
        super().setUp()
        if not has_mpi4py():
            self.skipTest(f"{sys.executable} has no mpi4py")
        mpiexec = os.environ.get("MPSBENCH_SWEEP_TEST_MPIEXEC") or shutil.which("mpirun") or shutil.which("mpiexec")
        if not mpiexec:
            self.skipTest("no MPI launcher")
        self.mpiexec = mpiexec
        # --app-launcher mpirun finds mpirun (or mpiexec) on PATH, and the ranks' python3 is this one.
        self.env["PATH"] = os.pathsep.join([os.path.dirname(sys.executable), os.path.dirname(mpiexec),
                                            self.env.get("PATH", "")])

    def test_alone(self):
        root = ["--allow-run-as-root"] if os.geteuid() == 0 and "Open MPI" in subprocess.run(
            [self.mpiexec, "--version"], capture_output=True, text=True).stdout else []
        r = subprocess.run([self.mpiexec] + root + ["-np", "2", sys.executable, EXAMPLE] + SMALL, capture_output=True,
                           text=True, timeout=120, env=self.env)
        self.assertEqual(r.returncode, 0, r.stdout + r.stderr)
        self.assertRegex(r.stdout, r"(?m)^steps_per_s: [0-9.e+]+$")
        self.assertIn("result=ok", r.stdout)

    def test_farmed_with_its_own_rate(self):
        app = " ".join([os.path.basename(sys.executable), EXAMPLE] + SMALL)
        r = self.sweep(["--app", app, "--app-launcher", "mpirun", "--app-metric", r"steps_per_s: ([0-9.e+]+)",
                        "--app-metric-unit", "steps/s", "--app-check", CHECK, "--device", "cpu", "--modes",
                        "timeslice", "--ranks-per-gpu", "1,2", "--rounds", "1", "--min-time", "0.5",
                        "--repetitions", "2", "--output", self.output], timeout=300)
        self.assertEqual(r.returncode, 0, r.stdout + r.stderr)
        for rec in self.merged()["results"]:
            self.assertEqual((rec["status"], rec["verified"], rec["primary_unit"]), ("ok", True, "steps/s"))
            self.assertGreater(rec["aggregate"]["metric_per_s"]["median"], 0)
            self.assertEqual(rec["app"]["name"], "mpi_rate")
        self.assertIn("verdict: mpi_rate: best timeslice", r.stdout)
        self.assert_clean()
