"""Pure functions of the sweep: plan, passthrough, launcher command lines, merge, table."""
import os
import sys
import tempfile
import unittest
from unittest import mock

from sweeptest import REPO

sys.path.insert(0, os.path.join(REPO, "harness", "sweep"))
from mpsbench_sweep import launcher, merge, nvsmi, plan  # noqa: E402
from mpsbench_sweep.mps_daemon import mps_kind  # noqa: E402


class Plan(unittest.TestCase):
    def test_jobs_and_ranks(self):
        jobs = plan.plan_jobs(["timeslice", "mps", "mps-qos", "streams"], [1, 2, 4, 8], None, 2, 4)
        self.assertEqual([(j.mode, j.np, j.ranks_per_gpu, j.thread_percentage, j.part_name) for j in jobs], [
            ("timeslice", 64, [1, 2, 4, 8], None, "part-timeslice.json"),
            ("mps", 64, [1, 2, 4, 8], None, "part-mps.json"),
            ("mps-qos", 8, [1], 100, "part-mps-qos-k1-p100.json"),
            ("mps-qos", 16, [2], 50, "part-mps-qos-k2-p50.json"),
            ("mps-qos", 32, [4], 25, "part-mps-qos-k4-p25.json"),
            ("mps-qos", 64, [8], 12, "part-mps-qos-k8-p12.json"),
            ("streams", 8, [1, 2, 4, 8], None, "part-streams.json")])
        self.assertEqual(jobs[0].mpsbench_args("p.json"),
                         ["--mode", "timeslice", "--ranks-per-gpu", "1,2,4,8", "--output", "p.json"])

    def test_explicit_percentages(self):
        jobs = plan.plan_jobs(["mps-qos"], [2], [30, 60], 1, 1)
        self.assertEqual([(j.np, j.thread_percentage) for j in jobs], [(2, 30), (2, 60)])

    def test_lists(self):
        self.assertEqual(plan.parse_list("--ranks-per-gpu", "4,1,2,4", low=1, high=64), [1, 2, 4])
        for bad in ("1,,2", "0", "x", "1,"):
            with self.assertRaises(plan.PlanError):
                plan.parse_list("--ranks-per-gpu", bad, low=1, high=64)
        with self.assertRaisesRegex(plan.PlanError, "unknown value 'mps2'"):
            plan.parse_list("--modes", "mps,mps2", choices=plan.MODES)

    def test_passthrough(self):
        self.assertEqual(plan.passthrough_options(["--kernel", "matmul", "--device=cpu", "--gpus", "0,1"]),
                         {"device": "cpu", "gpus": "0,1"})
        for owned in (["--mode", "mps"], ["--ranks-per-gpu=2"], ["--output", "x"]):
            with self.assertRaisesRegex(plan.PlanError, "the sweep sets it"):
                plan.passthrough_options(owned)

    def test_client_limit(self):
        self.assertEqual(plan.client_limit(None, None)[0], 48)
        self.assertEqual(plan.client_limit(None, [{"compute_cap": 9.0}])[0], 48)
        self.assertEqual(plan.client_limit(None, [{"compute_cap": 6.0}])[0], 16)
        self.assertEqual(plan.client_limit(60, [{"compute_cap": 6.0}])[0], 60)

    def preflight(self, **overrides):
        args = dict(modes=["timeslice", "mps"], ranks=[1, 2], jobs=plan.plan_jobs(["timeslice", "mps"], [1, 2], None, 1, 1),
                    device="auto", gpus=None, used_gpu_indices=None, limit=48, limit_reason="x",
                    mpsbench=sys.executable, control=sys.executable, nodes=1, launcher_kind="mpirun")
        args.update(overrides)
        plan.preflight(**args)

    def test_compute_modes(self):
        self.preflight(gpus=[{"index": 0, "compute_mode": "DEFAULT"}])
        self.preflight(gpus=[{"index": 0, "compute_mode": "EXCLUSIVE_PROCESS"}], modes=["mps"])
        self.preflight(gpus=[{"index": 1, "compute_mode": "EXCLUSIVE_PROCESS"}], used_gpu_indices={0})
        with self.assertRaisesRegex(plan.PlanError, "EXCLUSIVE_PROCESS, which admits one process"):
            self.preflight(gpus=[{"index": 0, "compute_mode": "EXCLUSIVE_PROCESS"}])
        with self.assertRaisesRegex(plan.PlanError, "PROHIBITED"):
            self.preflight(gpus=[{"index": 0, "compute_mode": "PROHIBITED"}], modes=["mps"])

    def test_slurm_allocation_too_small(self):
        with mock.patch.dict(os.environ, {"SLURM_NTASKS": "1", "SLURM_NNODES": "1"}):
            with self.assertRaisesRegex(plan.PlanError, "needs 2 tasks but the allocation has SLURM_NTASKS=1"):
                self.preflight(launcher_kind="srun")
            with self.assertRaisesRegex(plan.PlanError, "--nodes 2: the Slurm allocation has 1"):
                self.preflight(launcher_kind="srun", nodes=2)


class Launcher(unittest.TestCase):
    def test_template(self):
        l = launcher.Launcher(f"{sys.executable} -x --n={{np}} --per {{np_per_node}}", "auto")
        self.assertEqual(l.job_command(["mpsbench", "--mode", "mps"], 8, 2, {}),
                         [sys.executable, "-x", "--n=8", "--per", "4", "mpsbench", "--mode", "mps"])
        self.assertEqual(l.node_command(["helper"], 1), ["helper"])
        with self.assertRaisesRegex(launcher.LauncherError, "--node-launcher TEMPLATE"):
            l.node_command(["helper"], 2)
        for bad, message in (("mpirun -n {ranks}", "unknown placeholder"), ("mpirun -n 4", "has none of"),
                             ("no-such-launcher {np}", "not an executable"), ("'open", "cannot parse")):
            with self.assertRaisesRegex(launcher.LauncherError, message):
                launcher.Launcher(bad)

    def test_mpirun(self):
        with mock.patch("shutil.which", return_value="/usr/bin/mpirun"), \
                mock.patch.object(launcher, "_open_mpi", return_value=True), \
                mock.patch.object(launcher, "_is_root", return_value=False), \
                mock.patch("os.cpu_count", return_value=4):
            l = launcher.Launcher("mpirun")
            env = {"CUDA_MPS_PIPE_DIRECTORY": "/p", "CUDA_MPS_ACTIVE_THREAD_PERCENTAGE": "50"}
            self.assertEqual(l.job_command(["mb"], 8, 1, env),
                             ["/usr/bin/mpirun", "--oversubscribe", "-np", "8", "-x", "CUDA_MPS_PIPE_DIRECTORY",
                              "-x", "CUDA_MPS_ACTIVE_THREAD_PERCENTAGE", "mb"])
            self.assertEqual(l.job_command(["mb"], 8, 2, {})[:5], ["/usr/bin/mpirun", "-np", "8", "--map-by", "ppr:4:node"])
            self.assertEqual(l.node_command(["h"], 2),
                             ["/usr/bin/mpirun", "-np", "2", "--map-by", "ppr:1:node", "--stdin", "all", "-x",
                              "PYTHONPATH", "h"])

    def test_srun(self):
        with mock.patch("shutil.which", return_value="/usr/bin/srun"), \
                mock.patch.dict(os.environ, {"SLURM_JOB_ID": "42"}):
            l = launcher.Launcher("auto")
            self.assertEqual(l.kind, "srun")
            self.assertEqual(l.job_command(["mb"], 16, 2, {}),
                             ["/usr/bin/srun", "--nodes=2", "--ntasks=16", "--ntasks-per-node=8",
                              "--kill-on-bad-exit=1", "--export=ALL", "mb"])
            self.assertEqual(l.node_command(["h"], 2),
                             ["/usr/bin/srun", "--nodes=2", "--ntasks=2", "--ntasks-per-node=1", "--overlap",
                              "--input=all", "--kill-on-bad-exit=0", "--export=ALL", "h"])
            self.assertEqual(l.node_command(["h"], 1)[:2], ["/usr/bin/srun", "--nodes=1"])


class MergeAndTable(unittest.TestCase):
    def test_si(self):
        self.assertEqual(merge.si(48.23e12, "FLOP/s"), "48.2 TFLOP/s")
        self.assertEqual(merge.si(9.274e9, "FLOP/s"), "9.27 GFLOP/s")
        self.assertEqual(merge.si(512.4e6, "interactions/s"), "512 Minteractions/s")
        self.assertEqual(merge.si(0.5, "B/s"), "0.50 B/s")
        self.assertEqual(merge.si(None, "FLOP/s"), "-")

    def result(self, mode, k, value, pct=None, verified=True):
        return {"kernel": "nbody", "precision": "fp32", "size": 4096, "ranks_per_gpu": k, "mode": mode,
                "mps_active_thread_percentage": pct, "primary_metric": "item_per_s", "primary_unit": "interactions/s",
                "aggregate": {"item_per_s": {"median": value}}, "verified": verified}

    def test_table_missing_cells_and_split_qos(self):
        doc = {"results": [self.result("timeslice", 2, 1e9), self.result("mps", 2, 2e9, verified=False),
                           self.result("mps-qos", 2, 1.5e9, 25), self.result("mps-qos", 2, 1.8e9, 50),
                           self.result("streams", 4, 4e9)]}
        lines = merge.table(doc).splitlines()
        self.assertEqual(lines[0].split()[4:8], ["timeslice", "mps", "mps-qos", "25%"])
        row2 = lines[1].split()
        self.assertEqual(row2[:4], ["nbody", "fp32", "4096", "2"])
        self.assertIn("2.00x", row2)
        self.assertEqual(row2[-1], "mps")  # "NO: mps"
        row4 = lines[2].split()
        self.assertEqual(row4.count("-"), 7)  # four modes missing, ratios missing: only streams is there

    def test_merge_and_atomic_write(self):
        part = {"schema": "mpsbench-results", "schema_version": 2, "complete": True, "context": {"a": 1},
                "results": [1, 2]}
        self.assertIsNone(merge.merge([], {}, True))
        doc = merge.merge([part, dict(part, complete=False, results=[3])], {"jobs": []}, True)
        self.assertEqual((doc["results"], doc["complete"], doc["context"]["sweep"]), ([1, 2, 3], False, {"jobs": []}))
        self.assertNotIn("sweep", part["context"])
        with tempfile.TemporaryDirectory() as d:
            path = os.path.join(d, "m.json")
            merge.write_atomic(path, doc)
            merge.write_atomic(path, part)
            self.assertEqual(merge.load_part(path), part)
            self.assertEqual(os.listdir(d), ["m.json"])
            with open(path, "w") as f:
                f.write("{truncated")
            self.assertIsNone(merge.load_part(path))


class Discovery(unittest.TestCase):
    def test_mps_kind(self):
        self.assertEqual(mps_kind(["/usr/bin/nvidia-cuda-mps-control", "-d"]), "daemon")
        self.assertEqual(mps_kind(["python3", "/x/nvidia-cuda-mps-control", "-f"]), "daemon")
        self.assertIsNone(mps_kind(["nvidia-cuda-mps-control"]))  # a client command, not a daemon
        self.assertEqual(mps_kind(["nvidia-cuda-mps-server"]), "server")
        self.assertIsNone(mps_kind(["vim", "nvidia-cuda-mps-control.txt"]))

    def test_nvidia_smi_parsing(self):
        apps = "1234, nvidia-cuda-mps-server, 512\n1300, /opt/app/mpsbench, 300\n1400, nvidia-cuda-mps-server, 128\n"
        with mock.patch.object(nvsmi, "_query", return_value=apps):
            self.assertEqual(nvsmi.mps_server_memory_bytes(), 640 * 2**20)
        with mock.patch.object(nvsmi, "_query", return_value="1300, /opt/app/mpsbench, 300\n"):
            self.assertIsNone(nvsmi.mps_server_memory_bytes())
        with mock.patch.object(nvsmi, "_query", return_value="0, NVIDIA H100 80GB HBM3, Exclusive_Process, 9.0\n"):
            self.assertEqual(nvsmi.gpus(), [{"index": 0, "name": "NVIDIA H100 80GB HBM3",
                                             "compute_mode": "EXCLUSIVE_PROCESS", "compute_cap": 9.0}])
        with mock.patch.object(nvsmi, "_query", return_value="GPU 0: H100 (UUID: x)\n  MIG 1g.10gb Device 0: (UUID: y)\n"
                                                            "GPU 1: H100 (UUID: z)\n"):
            self.assertEqual(nvsmi.gpu_count(), 2)
        with mock.patch.object(nvsmi, "_query", return_value=None):
            self.assertIsNone(nvsmi.gpus())


if __name__ == "__main__":
    unittest.main()
