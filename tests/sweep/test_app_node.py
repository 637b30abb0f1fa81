"""mpsbench-sweep --app and the node: CPU binding, the user's environment under --app-launcher mpirun (a fake
Open MPI), GPU memory per copy where nvidia-smi lists no process (a fake nvidia-smi in a "container"), energy and
SM activity from a fake mpsbench-meter with known counters."""
import os
import shutil
import subprocess
import sys
import unittest

from sweeptest import HERE
from test_app import FAKE_APP, AppTestCase

FAKE_OMPI = os.path.join(HERE, "fake_ompi.py")
# A script cannot see the argv[0] it was run with (the kernel passes its path to the interpreter), and that
# argv[0] is what Open MPI's --prefix behaviour depends on: a compiled `mpirun` hands it over.
ARGV0_WRAPPER = r"""
#include <stdlib.h>
#include <unistd.h>
int main(int argc, char **argv) {
    setenv("FAKE_MPIRUN_ARGV0", argv[0], 1);
    argv[0] = "FAKE_OMPI";
    execv("FAKE_OMPI", argv);
    return 127;
}
"""
FAKE_NVSMI = os.path.join(HERE, "fake_nvsmi")
FAKE_METER = os.path.join(HERE, "fake_meter.py")
RATE = r"rate: ([0-9.]+)"
MIB = 1 << 20
QUICK = ("--repetitions", "1", "--no-warmup")


class Binding(AppTestCase):
    def test_core_gives_each_copy_cores_of_its_own_and_is_an_axis_like_the_modes(self):
        r = self.sweep(self.cpu_args(f"{FAKE_APP} --sleep 0.05", "--app-bind", "none,core", "--repetitions", "1",
                                     ranks="1,2", min_time="0.3"))
        self.assertEqual(r.returncode, 0, r.stderr)
        records = {(x["app"]["bind"], x["ranks_per_gpu"]): x for x in self.merged()["results"]}
        self.assertEqual(sorted(records), [("core", 1), ("core", 2), ("none", 1), ("none", 2)])
        allowed = sorted(os.sched_getaffinity(0))
        self.assertEqual([c["cpus"] for c in records[("none", 2)]["copies"]], [None, None])
        pinned = [c["cpus"] for c in records[("core", 2)]["copies"]]
        self.assertTrue(all(pinned), pinned)
        if len(allowed) >= 2:
            sets = [{int(x) for x in p.replace("-", ",").split(",")} for p in pinned]
            self.assertFalse(sets[0] & sets[1], f"two copies share a core: {pinned}")
        seen = {}
        for line in self.copies_log():
            seen.setdefault(line["cpus"], set()).add(line["copy"])
        self.assertIn(",".join(map(str, allowed)), seen, "unpinned runs may use every CPU")
        self.assertIn("bind=core", r.stderr)
        self.assertIn("core", r.stdout)


class UserEnvironment(AppTestCase):
    """`--app-launcher mpirun`: the ranks get PATH, PYTHONPATH and VIRTUAL_ENV as the user's shell has them, on
    this node (Open MPI run by its absolute path would put its own bin/ first) and on others (-x)."""

    def setUp(self):
        super().setUp()
        compiler = shutil.which("cc") or shutil.which("gcc")
        if compiler is None:
            self.skipTest("no C compiler for the fake mpirun's argv[0] wrapper")
        ompi = os.path.join(self.tmp, "ompi", "bin")
        os.makedirs(ompi)
        with open(os.path.join(self.tmp, "argv0.c"), "w") as f:
            f.write(ARGV0_WRAPPER.replace("FAKE_OMPI", FAKE_OMPI))
        subprocess.run([compiler, "-o", os.path.join(ompi, "mpirun"), os.path.join(self.tmp, "argv0.c")], check=True)
        venv = os.path.join(self.tmp, "venv")
        os.makedirs(os.path.join(venv, "bin"))
        python = os.path.join(venv, "bin", "python3")
        with open(python, "w") as f:
            f.write(f"#!/bin/sh\nFAKE_VENV_PYTHON=1 exec {sys.executable} \"$@\"\n")
        os.chmod(python, 0o755)
        self.venv, self.log = venv, os.path.join(self.tmp, "mpirun.log")
        self.env.update(PATH=os.pathsep.join([os.path.join(venv, "bin"), ompi, self.env["PATH"]]),
                        VIRTUAL_ENV=venv, PYTHONPATH=os.path.join(self.tmp, "user-lib"), FAKE_MPIRUN_LOG=self.log)

    def check(self, remote):
        r = self.sweep(self.cpu_args(f"python3 {FAKE_APP} --sleep 0.05", "--app-launcher", "mpirun", ranks="2",
                                     min_time="0.3"), FAKE_MPIRUN_REMOTE="1" if remote else "0")
        self.assertEqual(r.returncode, 0, r.stderr)
        lines = self.copies_log()
        self.assertTrue(lines)
        for line in lines:
            self.assertEqual((line["path0"], line["pythonpath"], line["venv"], line["venv_python"]),
                             (os.path.join(self.venv, "bin"), self.env["PYTHONPATH"], self.venv, "1"), line)
        with open(self.log) as f:
            launches = f.read().splitlines()
        self.assertTrue(all(line.startswith("argv0=mpirun ") for line in launches), launches)
        exported = launches[0].split("exported=")[1].split(",")
        for var in ("PATH", "PYTHONPATH", "VIRTUAL_ENV", "MPSBENCH_GPUS_PER_NODE", "CUDA_MPS_PIPE_DIRECTORY"):
            self.assertIn(var, exported)

    def test_on_this_node(self):
        self.check(remote=False)

    def test_on_another_node(self):
        self.check(remote=True)


class MemoryWithoutProcesses(AppTestCase):
    def test_device_memory_delta_over_the_copies(self):
        # Two copies per GPU, 256 MiB each as the fake nvidia-smi counts them, 1000 MiB in use before.
        r = self.sweep(self.gpu_args(f"{FAKE_APP} --sleep 1", "--repetitions", "1", ranks="2", min_time="2.5"),
                       FAKE_PROBE_GPUS="2", PATH=FAKE_NVSMI + os.pathsep + self.env["PATH"])
        self.assertEqual(r.returncode, 0, r.stderr)
        rec = self.results()[("timeslice", 2)]
        self.assertEqual(rec["app"]["gpu_memory_method"], "device used delta / copies")
        self.assertEqual(rec["app"]["gpu_memory_bytes"], {str(i): 256 * MIB for i in range(4)})
        job = self.merged()["context"]["sweep"]["jobs"][0]
        self.assertEqual(job["copy_memory_method"], "device used delta / copies")


class Energy(AppTestCase):
    def test_known_counters_give_exact_joules_per_unit_and_activity(self):
        # 2 GPUs at 250 W each; 2 copies (one per GPU), 100 units/s each: 500 W / 200 units/s = 2.5 J/unit.
        r = self.sweep(self.gpu_args(f"{FAKE_APP} --rate 100 --sleep 0.1", "--app-metric", RATE, "--meter",
                                     FAKE_METER, "--repetitions", "2", ranks="1", min_time="1"), FAKE_PROBE_GPUS="2")
        self.assertEqual(r.returncode, 0, r.stderr)
        rec = self.results()[("timeslice", 1)]
        energy, activity = rec["energy"], rec["gpu_activity"]
        self.assertTrue(energy["available"], energy)
        self.assertAlmostEqual(energy["joules_per_unit"], 2.5, places=9)
        self.assertAlmostEqual(energy["mean_power_w"], 500.0, places=6)
        self.assertAlmostEqual(energy["joules"], 500.0 * energy["span_s"], places=6)
        self.assertGreater(energy["span_s"], 2.0)
        self.assertEqual((energy["work_unit"], energy["uncertainty"], energy["method"]), ("units", 2.0, "fake counter"))
        self.assertEqual((activity["sm_active"], activity["sm_occupancy"], activity["dram_bw"],
                          activity["tensor_active"]), (80.0, 40.0, 30.0, 10.0))
        self.assertEqual(sorted(g["uuid"] for g in activity["per_gpu"]), ["GPU-fake-0", "GPU-fake-1"])
        self.assertIn("J/unit", r.stdout)
        self.assertIn("2.50 J/units", r.stdout)
        self.assertIn("80%", r.stdout)

    def test_with_a_counter_the_span_is_the_common_window(self):
        log = os.path.join(self.tmp, "meter.log")
        r = self.sweep(self.gpu_args(f"{FAKE_APP} --startup 1 --count-rate 100 --count-for 1.5", "--app-progress",
                                     r"^([0-9.]+),progress", "--meter", FAKE_METER, "--repetitions", "1",
                                     ranks="1", min_time=None), FAKE_PROBE_GPUS="2", FAKE_METER_LOG=log)
        self.assertEqual(r.returncode, 0, r.stderr)
        rec = self.results()[("timeslice", 1)]
        self.assertAlmostEqual(rec["energy"]["span_s"], rec["app"]["metric"]["common_window_s"][0], delta=0.25)
        self.assertAlmostEqual(rec["energy"]["joules_per_unit"], 500.0 / rec["aggregate"]["metric_per_s"]["median"],
                               delta=0.3)

    def test_unavailable_says_why_never_zero(self):
        r = self.sweep(self.gpu_args(f"{FAKE_APP} --sleep 0.05", "--meter", FAKE_METER, *QUICK, ranks="1",
                                     min_time="0.3"),
                       FAKE_PROBE_GPUS="2", FAKE_METER_NO_GPM="GPM needs Hopper or later")
        self.assertEqual(r.returncode, 0, r.stderr)
        rec = self.results()[("timeslice", 1)]
        self.assertTrue(rec["energy"]["available"])
        self.assertGreater(rec["energy"]["joules_per_unit"], 0)
        self.assertEqual(rec["energy"]["work_unit"], "run")
        self.assertEqual(rec["gpu_activity"], {"available": False, "reason": "GPM needs Hopper or later"})
        r = self.sweep(self.gpu_args(f"{FAKE_APP} --sleep 0.05", "--meter", FAKE_METER, *QUICK, ranks="1",
                                     min_time="0.3"),
                       FAKE_PROBE_GPUS="2", FAKE_METER_NOT_READY="no permission to read the energy counter")
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertEqual(self.results()[("timeslice", 1)]["energy"],
                         {"available": False, "reason": "mpsbench-meter: no permission to read the energy counter"})
        # No meter where the sweep looks for one (no --meter, none built beside the fake probe's repository).
        r = self.sweep(self.gpu_args(f"{FAKE_APP} --sleep 0.05", *QUICK, ranks="1", min_time="0.3"),
                       FAKE_PROBE_GPUS="2",
                       PATH=os.path.dirname(sys.executable) + os.pathsep + "/usr/bin:/bin")
        self.assertEqual(r.returncode, 0, r.stderr)
        energy = self.results()[("timeslice", 1)]["energy"]
        if energy["available"] is False:  # a tree with build/mpsbench-meter meters for real
            self.assertIn("mpsbench-meter", energy["reason"])
        r = self.sweep(self.cpu_args(f"{FAKE_APP} --sleep 0.05", *QUICK, ranks="1", min_time="0.3"))
        self.assertEqual(self.results()[("timeslice", 1)]["gpu_activity"]["reason"],
                         "the CPU device: no GPU energy counter or SM activity to read")
