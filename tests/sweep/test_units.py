"""Pure functions of the sweep: plan, passthrough, launcher command lines, merge, table."""
import os
import sys
import tempfile
import unittest
from unittest import mock

import sweeptest  # noqa: F401  (the packages' paths)
from mpsbench_sweep import inputs, launcher, merge, nvsmi, passthrough, plan, preflight  # noqa: E402
from mpsbench_sweep.console_report import console_report  # noqa: E402
from mpsbench_sweep.daemon import node_checks  # noqa: E402
from mpsbench_sweep.daemon.mps_daemon import control_env, mps_kind  # noqa: E402
from mpsbench_sweep.jobs import ramp  # noqa: E402


class Plan(unittest.TestCase):
    def test_jobs_and_ranks(self):
        jobs = plan.plan_jobs(["timeslice", "mps", "mps-qos", "streams"], [1, 2, 4, 8], None, 2, 4)
        self.assertEqual([(j.mode, j.np, j.ranks_per_gpu, j.thread_percentage, j.part_name) for j in jobs], [
            ("timeslice", 64, (1, 2, 4, 8), None, "part-timeslice.json"),
            ("mps", 64, (1, 2, 4, 8), None, "part-mps.json"),
            ("mps-qos", 8, (1,), 100, "part-mps-qos-k1-p100.json"),
            ("mps-qos", 16, (2,), 50, "part-mps-qos-k2-p50.json"),
            ("mps-qos", 32, (4,), 25, "part-mps-qos-k4-p25.json"),
            ("mps-qos", 64, (8,), 12, "part-mps-qos-k8-p12.json"),
            ("streams", 8, (1, 2, 4, 8), None, "part-streams.json")])
        self.assertEqual(jobs[0].mpsbench_args("p.json"),
                         ["--mode", "timeslice", "--ranks-per-gpu", "1,2,4,8", "--output", "p.json"])

    def test_green_runs_one_rank_per_gpu_like_streams(self):
        jobs = plan.plan_jobs(["mps-qos", "green"], [2, 4], None, 1, 2)
        self.assertEqual([(j.mode, j.np, j.ranks_per_gpu, j.thread_percentage) for j in jobs],
                         [("mps-qos", 4, (2,), 50), ("mps-qos", 8, (4,), 25), ("green", 2, (2, 4), None)])
        self.assertEqual(jobs[-1].mpsbench_args("p.json")[:2], ["--mode", "green"])
        common = dict(ranks=[65], jobs=[], device=None, gpus=None, used_gpu_indices=None, limit=48, limit_reason="",
                      mpsbench=None, control="true", nodes=1, launcher_kind="mpirun")
        with self.assertRaisesRegex(inputs.InputError, "mode green runs at most 64 instances per GPU"):
            preflight.preflight(modes=["green"], **common)

    def test_explicit_percentages(self):
        jobs = plan.plan_jobs(["mps-qos"], [2], [30, 60], 1, 1)
        self.assertEqual([(j.np, j.thread_percentage) for j in jobs], [(2, 30), (2, 60)])

    def test_lists(self):
        self.assertEqual(inputs.integer_list("--ranks-per-gpu", "4,1,2,4", 1, 64), [1, 2, 4])
        for bad in ("1,,2", "0", "x", "1,"):
            with self.assertRaises(inputs.InputError):
                inputs.integer_list("--ranks-per-gpu", bad, 1, 64)
        with self.assertRaisesRegex(inputs.InputError, "unknown value 'mps2'"):
            inputs.choice_list("--modes", "mps,mps2", ("timeslice", "mps"))

    def test_passthrough(self):
        self.assertEqual(passthrough.passthrough_options(["--kernel", "matmul", "--device=cpu", "--gpus", "0,1"]),
                         {"device": "cpu", "gpus": "0,1"})
        self.assertEqual(passthrough.passthrough_options(["--discard-throttled", "--kernel", "nbody"]),
                         {"discard-throttled": True})
        for owned in (["--mode", "mps"], ["--ranks-per-gpu=2"], ["--output", "x"], ["--turns", "/tmp/s"]):
            with self.assertRaisesRegex(inputs.InputError, "the sweep sets it"):
                passthrough.passthrough_options(owned)

    def test_client_limit(self):
        self.assertEqual(preflight.client_limit(None, None)[0], 48)
        self.assertEqual(preflight.client_limit(None, [{"compute_cap": 9.0}])[0], 48)
        self.assertEqual(preflight.client_limit(None, [{"compute_cap": 6.0}])[0], 16)
        self.assertEqual(preflight.client_limit(60, [{"compute_cap": 6.0}])[0], 60)

    def preflight(self, **overrides):
        args = dict(modes=["timeslice", "mps"], ranks=[1, 2], jobs=plan.plan_jobs(["timeslice", "mps"], [1, 2], None, 1, 1),
                    device="auto", gpus=None, used_gpu_indices=None, limit=48, limit_reason="x",
                    mpsbench=sys.executable, control=sys.executable, nodes=1, launcher_kind="mpirun")
        args.update(overrides)
        preflight.preflight(**args)

    def test_compute_modes(self):
        self.preflight(gpus=[{"index": 0, "compute_mode": "DEFAULT"}])
        self.preflight(gpus=[{"index": 0, "compute_mode": "EXCLUSIVE_PROCESS"}], modes=["mps"])
        self.preflight(gpus=[{"index": 1, "compute_mode": "EXCLUSIVE_PROCESS"}], used_gpu_indices={0})
        with self.assertRaisesRegex(inputs.InputError, "EXCLUSIVE_PROCESS, which admits one process"):
            self.preflight(gpus=[{"index": 0, "compute_mode": "EXCLUSIVE_PROCESS"}])
        with self.assertRaisesRegex(inputs.InputError, "PROHIBITED"):
            self.preflight(gpus=[{"index": 0, "compute_mode": "PROHIBITED"}], modes=["mps"])

    def test_slurm_allocation_too_small(self):
        with mock.patch.dict(os.environ, {"SLURM_NTASKS": "1", "SLURM_NNODES": "1"}):
            with self.assertRaisesRegex(inputs.InputError, "needs 2 tasks but the allocation has SLURM_NTASKS=1"):
                self.preflight(launcher_kind="srun")
            with self.assertRaisesRegex(inputs.InputError, "--nodes 2: the Slurm allocation has 1"):
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
            self.assertEqual(l.job_command(["mb"], 8, 2, {}),
                             ["/usr/bin/mpirun", "-np", "8", "--map-by", "ppr:4:node", "--bind-to",
                              "core:overload-allowed", "mb"])
            # mpsbench's ranks on cores of their own (rank r of every job on the same core), where the node
            # has a CPU for each; a user's own program is left to its launcher's defaults.
            self.assertEqual(l.job_command(["mb"], 4, 1, {}),
                             ["/usr/bin/mpirun", "-np", "4", "--bind-to", "core:overload-allowed", "mb"])
            self.assertNotIn("--bind-to", l.job_command(["app"], 4, 1, {}, user_env=True))
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
    def result(self, mode, k, value, pct=None, verified=True):
        return {"kind": "kernel", "kernel": "nbody", "precision": "fp32", "size": 4096, "ranks_per_gpu": k,
                "mode": mode, "mps_active_thread_percentage": pct, "primary_metric": "item_per_s",
                "primary_unit": "interactions/s", "status": "ok", "aggregate": {"item_per_s": {"median": value}},
                "verified": verified}

    def test_table_missing_cells_and_split_qos(self):
        doc = {"results": [self.result("timeslice", 2, 1e9), self.result("mps", 2, 2e9, verified=False),
                           self.result("mps-qos", 2, 1.5e9, 25), self.result("mps-qos", 2, 1.8e9, 50),
                           self.result("streams", 4, 4e9)]}
        lines = console_report(doc).splitlines()
        self.assertEqual(lines[0].split()[4:8], ["timeslice", "mps", "mps-qos", "25%"])
        row2 = lines[1].split()
        self.assertEqual(row2[:4], ["nbody", "fp32", "4096", "2"])
        self.assertIn("2.00x", row2)
        self.assertEqual(row2[-1], "mps")  # "NO: mps"
        row4 = lines[2].split()
        self.assertEqual(row4.count("-"), 7)  # four modes missing, ratios missing: only streams is there

    def test_green_against_mps_qos_at_the_same_share(self):
        doc = {"results": [self.result("mps-qos", 2, 1.6e9, 50), self.result("green", 2, 2.0e9),
                           self.result("mps-qos", 4, 2.0e9, 25), self.result("green", 4, 1.0e9)]}
        lines = console_report(doc).splitlines()
        self.assertEqual(lines[0].split()[4:], ["mps-qos", "green", "green/qos", "verified"])
        self.assertEqual(lines[1].split()[-2], "1.25x")
        self.assertEqual(lines[2].split()[-2], "0.50x")
        self.assertTrue(any(l.startswith("green/qos = green / mps-qos at the same k") for l in lines))
        self.assertFalse(any(l.startswith("MPS gain = ") for l in lines))  # no such column here
        # Several percentages at one k: no single share to compare with, so no ratio.
        doc["results"].append(self.result("mps-qos", 2, 1.0e9, 100))
        self.assertNotIn("green/qos", console_report(doc).splitlines()[0])

    def test_merge_and_atomic_write(self):
        part = {"schema": "mpsbench-results", "schema_version": 3, "complete": True, "context": {"a": 1},
                "results": [1, 2]}
        self.assertIsNone(merge.merge([], {}, True))
        doc = merge.merge([part, dict(part, complete=False, results=[3])], {"jobs": []}, True)
        self.assertEqual((doc["results"], doc["complete"], doc["context"]["sweep"]), ([1, 2, 3], False, {"jobs": [], "gains": []}))
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


class MemoryLimitsAndRamp(unittest.TestCase):
    def test_mem_limits(self):
        self.assertEqual(plan.parse_mem_limits("8G,512mb, 2g,2048M"), ["512MB", "2G", "8G"])
        self.assertEqual(plan.mem_limit_bytes("512MB"), 512 * 2**20)
        self.assertEqual(plan.mem_limit_env("2G", 3), "0=2G,1=2G,2=2G")
        for bad in ("2", "2T", "0G", "-1G", "2G,", "1.5G", "G"):
            with self.assertRaises(inputs.InputError):
                plan.parse_mem_limits(bad)

    def test_mps_mem_jobs(self):
        jobs = plan.plan_jobs(["mps", "mps-mem"], [1, 4], None, 2, 2, mem_limits=["1G", "4G"])
        self.assertEqual([(j.mode, j.np, j.ranks_per_gpu, j.mem_limit, j.part_name, j.label()) for j in jobs], [
            ("mps", 16, (1, 4), None, "part-mps.json", "mps"),
            ("mps-mem", 16, (1, 4), "1G", "part-mps-mem-1G.json", "mps-mem 1G"),
            ("mps-mem", 16, (1, 4), "4G", "part-mps-mem-4G.json", "mps-mem 4G")])
        self.assertEqual(jobs[1].mpsbench_args("p.json")[:2], ["--mode", "mps"])  # mpsbench has no mode mps-mem

    def test_ramp_plan(self):
        self.assertEqual(plan.ramp_steps(48), [1, 2, 4, 8, 16, 32, 48, 49])
        self.assertEqual(plan.ramp_steps(16), [1, 2, 4, 8, 16, 17])
        self.assertEqual(plan.ramp_steps(1), [1, 2])
        jobs = plan.plan_ramp(4, 1, 2)
        self.assertEqual([(j.mode, j.np, j.past_limit, j.part_name, j.label()) for j in jobs], [
            ("mps", 2, False, "part-mps-k1.json", "mps k=1"), ("mps", 4, False, "part-mps-k2.json", "mps k=2"),
            ("mps", 8, False, "part-mps-k4.json", "mps k=4"),
            ("mps", 10, True, "part-mps-k5.json", "mps k=5 (past the limit)")])
        self.assertEqual(ramp.parse_limit("48\n"), 48)
        for answer in ("", "Invalid command", "0", "48 60", None):
            self.assertIsNone(ramp.parse_limit(answer))

    def test_ramp_table_and_finding(self):
        r = {"status": "ok", "kind": "kernel", "kernel": "matmul", "precision": "fp32", "size": 256, "ranks_per_gpu": 2,
             "primary_metric": "flop_per_s", "primary_unit": "FLOP/s", "verified": True,
             "aggregate": {"flop_per_s": {"median": 4e12}}}
        job2, job3 = plan.plan_ramp(2, 1, 1)[1:]
        ok = ramp.step(job2, {"status": "ok", "exit_code": 0, "error": None, "wall_s": 1.0, "daemon": None,
                              "ranks": [{"context_memory_bytes": None}, {"context_memory_bytes": 300 * 2**20}]},
                       {"results": [r, dict(r, ranks_per_gpu=1)]}, [], 600)
        failed = ramp.step(job3, {"status": "failed", "exit_code": 134, "error": None, "wall_s": 1.0,
                                  "daemon": {"mps_server_memory_bytes": 40 * 2**20}, "ranks": None}, None,
                           ["a", "b", "c", "MPS client limit reached"], 600)
        self.assertEqual((ok["results"][0]["aggregate_median"], len(ok["results"]), ok["context_memory_bytes_median"]),
                         (4e12, 1, 300 * 2**20))
        self.assertEqual(failed["error"], "b / c / MPS client limit reached")
        state = {"limit": 2, "limit_source": "--mps-client-limit", "steps": [ok, failed]}
        self.assertEqual(ramp.finding(state), "2 clients per GPU ran; 3 (one past the limit of 2, --mps-client-limit) "
                                              "failed as a recorded step (failed): b / c / MPS client limit reached")
        lines = ramp.table(state).splitlines()
        self.assertEqual(lines[2].split()[:8], ["2", "2", "ok", "4.00", "TFLOP/s", "2.00", "TFLOP/s", "300"])
        self.assertEqual(lines[3].split()[:6], ["3", "(past)", "3", "failed", "-", "-"])
        self.assertIn("40 MiB", lines[3])
        state["steps"] = [ok, dict(failed, status="ok", error=None)]
        self.assertIn("the server accepts more than the limit of 2", ramp.finding(state))

    def test_mps_mem_results_keep_their_own_columns(self):
        def result(mode, value, limit=None, verified=True):
            r = {"kind": "kernel", "kernel": "matmul", "precision": "fp32", "size": 1024, "ranks_per_gpu": 2,
                 "mode": mode, "mps_active_thread_percentage": None, "primary_metric": "flop_per_s",
                 "primary_unit": "FLOP/s", "status": "ok", "aggregate": {"flop_per_s": {"median": value}},
                 "verified": verified}
            job = plan.plan_jobs(["mps-mem"], [2], None, 1, 1, mem_limits=[limit])[0] if limit else None
            return merge.relabel({"results": [r]}, job)["results"][0] if limit else r
        doc = {"results": [result("mps", 2e12), result("mps", 1e12, "8G"), result("mps", 0.5e12, "512M", False),
                           result("timeslice", 1e12)]}
        self.assertEqual([(r["mode"], r.get("mps_pinned_device_mem_limit")) for r in doc["results"]],
                         [("mps", None), ("mps-mem", "8G"), ("mps-mem", "512M"), ("timeslice", None)])
        lines = console_report(doc).splitlines()
        self.assertEqual(lines[0].split()[4:10], ["timeslice", "mps", "mps-mem", "512M", "mps-mem", "8G"])
        row = lines[1].split()
        self.assertEqual(row[4:12], ["1.00", "TFLOP/s", "2.00", "TFLOP/s", "500", "GFLOP/s", "1.00", "TFLOP/s"])
        self.assertTrue(lines[1].endswith("NO: mps-mem 512M"), lines[1])

    def test_the_variable_reaches_remote_ranks_and_not_the_daemon(self):
        with mock.patch("shutil.which", return_value="/usr/bin/mpirun"), \
                mock.patch.object(launcher, "_open_mpi", return_value=True), \
                mock.patch.object(launcher, "_is_root", return_value=False):
            l = launcher.Launcher("mpirun")
            env = {"CUDA_MPS_PIPE_DIRECTORY": "/p", "CUDA_MPS_PINNED_DEVICE_MEM_LIMIT": "0=2G"}
            self.assertEqual(l.job_command(["mb"], 2, 1, env)[-5:],
                             ["-x", "CUDA_MPS_PIPE_DIRECTORY", "-x", "CUDA_MPS_PINNED_DEVICE_MEM_LIMIT", "mb"])
        with mock.patch.dict(os.environ, {"CUDA_MPS_PINNED_DEVICE_MEM_LIMIT": "0=1G",
                                          "CUDA_MPS_ACTIVE_THREAD_PERCENTAGE": "50"}):
            env = control_env("/pipe")
        self.assertNotIn("CUDA_MPS_PINNED_DEVICE_MEM_LIMIT", env)
        self.assertNotIn("CUDA_MPS_ACTIVE_THREAD_PERCENTAGE", env)


class NodeChecks(unittest.TestCase):
    def plant(self, root, pid, name, uid, argv=None, state="S"):
        os.makedirs(os.path.join(root, str(pid)))
        with open(os.path.join(root, str(pid), "status"), "w") as f:
            f.write(f"Name:\t{name}\nState:\t{state} (x)\nUid:\t{uid + 1}\t{uid}\t{uid}\t{uid}\n")
        if argv is not None:
            with open(os.path.join(root, str(pid), "cmdline"), "wb") as f:
                f.write(b"\0".join(a.encode() for a in argv))

    def test_mps_processes_and_other_users(self):
        with tempfile.TemporaryDirectory() as root:
            self.plant(root, 10, "nvidia-cuda-mps", 1000, ["/usr/bin/nvidia-cuda-mps-control", "-d"])
            self.plant(root, 11, "nvidia-cuda-mps", 1000, ["nvidia-cuda-mps-server"])
            self.plant(root, 12, "nvidia-cuda-mps", 2000)  # command line hidden
            self.plant(root, 13, "nvidia-cuda-mps", 2000, ["nvidia-cuda-mps-control"])  # a client command
            self.plant(root, 14, "nvidia-cuda-mps", 2000, ["nvidia-cuda-mps-server"], state="Z")
            self.plant(root, 15, "bash", 2000, ["bash"])
            os.makedirs(os.path.join(root, "self"))
            self.assertEqual(node_checks.mps_processes(root), [
                {"pid": 10, "kind": "daemon", "uid": 1000}, {"pid": 11, "kind": "server", "uid": 1000},
                {"pid": 12, "kind": "daemon or server", "uid": 2000}])
            found = node_checks.other_mps_users(None, (), root=root, uid=1000)  # the effective UID counts
            self.assertEqual([(f["what"], f["pid"], f["uid"]) for f in found], [("daemon or server", 12, 2000)])
            self.assertEqual(node_checks.other_mps_users(None, (), root=root, uid=2000)[0]["pid"], 10)
        self.assertEqual(node_checks.describe_others([{"what": "server", "pid": 5, "uid": 7, "user": "ann"},
                                                      {"what": "client", "pid": 6, "uid": 8, "user": None,
                                                       "server_pid": 5}]),
                         "MPS server pid 5, uid 7 (ann); a client of MPS server pid 5, pid 6, uid 8")

    def test_container_hint(self):
        with tempfile.TemporaryDirectory() as root, mock.patch.dict(os.environ, {}, clear=False):
            os.environ.pop("container", None)
            proc = os.path.join(root, "proc")
            os.makedirs(os.path.join(proc, "1"))
            with open(os.path.join(proc, "1", "cgroup"), "w") as f:
                f.write("0::/\n")
            self.assertIsNone(node_checks.container_hint(root, proc))
            with open(os.path.join(proc, "1", "cgroup"), "w") as f:
                f.write("0::/kubepods/besteffort/pod1/abc\n")
            self.assertEqual(node_checks.container_hint(root, proc), "/proc/1/cgroup names kubepods")
            os.environ["container"] = "podman"
            self.assertEqual(node_checks.container_hint(root, proc), "container=podman")
            os.makedirs(os.path.join(root, "run"))
            open(os.path.join(root, "run", ".containerenv"), "w").close()
            self.assertEqual(node_checks.container_hint(root, proc), "/run/.containerenv")
            open(os.path.join(root, ".dockerenv"), "w").close()
            self.assertEqual(node_checks.container_hint(root, proc), "/.dockerenv")
        line = node_checks.container_line("/.dockerenv")
        for words in ("CUDA_MPS_PIPE_DIRECTORY", "--ipc=host", "same UID"):
            self.assertIn(words, line)
        self.assertNotIn("\n", line)


if __name__ == "__main__":
    unittest.main()
