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

from mpsbench_core.app_energy import METRIC_REASON  # noqa: E402
from mpsbench_core.energy import format_per_unit  # noqa: E402

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


class MemoryPerCopy(AppTestCase):
    """One definition (app/memory.py): the largest memory a copy's own processes held at once, as nvidia-smi
    lists them on its GPU, each process once; unavailable where nvidia-smi lists none of them."""

    def test_the_same_figure_in_every_configuration(self):
        # Each copy's process holds 256 MiB, listed twice (FAKE_NVSMI_TWICE); a process that is no copy's holds
        # 400 MiB on every GPU. Before issue 36 this read 512 MiB per copy, or a device delta where the listing
        # did not match the query.
        r = self.sweep(self.gpu_args(f"{FAKE_APP} --sleep 1.2", *QUICK, ranks="1,2", min_time="2.5"),
                       FAKE_PROBE_GPUS="2", FAKE_NVSMI_LIST="1", FAKE_NVSMI_TWICE="1",
                       PATH=FAKE_NVSMI + os.pathsep + self.env["PATH"])
        self.assertEqual(r.returncode, 0, r.stderr)
        for k in (1, 2):
            app = self.results()[("timeslice", k)]["app"]
            self.assertEqual((app["gpu_memory_method"], app["gpu_memory_bytes"]),
                             ("nvidia-smi per process", {str(i): 256 * MIB for i in range(2 * k)}))
        self.assertIn("256 MiB", r.stdout)

    def test_no_process_listed_is_unavailable_not_a_device_delta(self):
        # A container: nvidia-smi lists no process; the device's memory in use grows by 256 MiB per copy over
        # 1000 MiB. Before issue 36 that growth, split over the copies, was the figure.
        r = self.sweep(self.gpu_args(f"{FAKE_APP} --sleep 1.2", *QUICK, ranks="2", min_time="2.5"),
                       FAKE_PROBE_GPUS="2", PATH=FAKE_NVSMI + os.pathsep + self.env["PATH"])
        self.assertEqual(r.returncode, 0, r.stderr)
        app = self.results()[("timeslice", 2)]["app"]
        self.assertEqual((app["gpu_memory_bytes"], app["gpu_memory_method"]), (None, None))
        job = self.merged()["context"]["sweep"]["jobs"][0]
        self.assertEqual((job["copy_memory_bytes"], job["copy_memory_method"]), (None, None))


class Energy(AppTestCase):
    """Energy per unit is the energy of the span in which the units were done over those units (core
    app_energy.py); the fake meter's GPUs draw 250 W each, 2 GPUs, one copy on each."""

    def test_a_programs_own_rate_gives_joules_per_run_and_no_joules_per_unit(self):
        # Before issue 36: 500 W / (2 x 100 units/s) = 2.5 J/unit, the rate times a window it was not measured over.
        r = self.sweep(self.gpu_args(f"{FAKE_APP} --rate 100 --sleep 0.1", "--app-metric", RATE, "--meter",
                                     FAKE_METER, "--repetitions", "2", ranks="1", min_time="1"), FAKE_PROBE_GPUS="2")
        self.assertEqual(r.returncode, 0, r.stderr)
        rec = self.results()[("timeslice", 1)]
        energy, activity = rec["energy"], rec["gpu_activity"]
        self.assertTrue(energy["available"], energy)
        self.assertIsNone(energy["joules_per_unit"])
        self.assertEqual(energy["per_unit_reason"], METRIC_REASON)
        runs = sum(rec["app"]["runs_per_repetition"])
        self.assertAlmostEqual(energy["joules_per_run"], energy["joules"] / runs)
        self.assertAlmostEqual(energy["mean_power_w"], 500.0, places=6)
        self.assertAlmostEqual(energy["joules"], 500.0 * energy["span_s"], places=6)
        self.assertGreater(energy["span_s"], 2.0)
        self.assertEqual((energy["work_unit"], energy["uncertainty"], energy["method"]), ("unit", 2.0, "fake counter"))
        self.assertEqual((activity["sm_active"], activity["sm_occupancy"], activity["dram_bw"],
                          activity["tensor_active"]), (80.0, 40.0, 30.0, 10.0))
        self.assertEqual(sorted(g["uuid"] for g in activity["per_gpu"]), ["GPU-fake-0", "GPU-fake-1"])
        self.assertIn("J/unit", r.stdout)
        self.assertIn(format_per_unit(energy["joules_per_run"], "run"), r.stdout)
        self.assertNotIn("J/units", r.stdout)
        self.assertIn("80%", r.stdout)

    def test_a_counter_gives_the_energy_of_its_span_over_the_units_counted_in_it(self):
        log = os.path.join(self.tmp, "meter.log")
        r = self.sweep(self.gpu_args(f"{FAKE_APP} --startup 1 --count-rate 100 --count-for 2 --sleep 0",
                                     "--app-progress", r"^([0-9.]+),progress", "--app-metric-unit", "steps/s", "--meter", FAKE_METER,
                                     *QUICK, ranks="1", min_time=None), FAKE_PROBE_GPUS="2", FAKE_METER_LOG=log)
        self.assertEqual(r.returncode, 0, r.stderr)
        rec = self.results()[("timeslice", 1)]
        energy = rec["energy"]
        self.assertAlmostEqual(energy["span_s"], rec["app"]["metric"]["common_window_s"][0], delta=0.25)
        self.assertEqual((energy["work_unit"], energy["joules_per_run"]), ("step", None))
        self.assertAlmostEqual(energy["work"], 200.0 * energy["span_s"], delta=0.05 * 200.0 * energy["span_s"])
        self.assertAlmostEqual(energy["joules_per_unit"], energy["joules"] / energy["work"])
        self.assertAlmostEqual(energy["joules_per_unit"], 2.5, delta=0.15)
        self.assertIn(format_per_unit(energy["joules_per_unit"], "step"), r.stdout)
        self.assertIn(" J/step", r.stdout)

    def test_what_a_run_does_after_its_last_counter_line_is_not_metered(self):
        # 0.8 s after the last of 1.5 s of counting (a teardown): the span ends at the last counter line (stop
        # AGO), so J/step is the counting's, 500 W / 200 steps/s. Before issue 36 it read the rate times the
        # whole span; after the first fix it was unavailable (the tail was 35 % of the span), and a real GEMM
        # program's 0.7 s of teardown after 12 s of work made it unavailable on the GPU machine too.
        log = os.path.join(self.tmp, "meter.log")
        r = self.sweep(self.gpu_args(f"{FAKE_APP} --count-rate 100 --count-for 1.5 --sleep 0.8", "--app-progress",
                                     r"^([0-9.]+),progress", "--app-metric-unit", "steps/s", "--meter", FAKE_METER,
                                     *QUICK, ranks="1", min_time=None), FAKE_PROBE_GPUS="2", FAKE_METER_LOG=log)
        self.assertEqual(r.returncode, 0, r.stderr)
        energy = self.results()[("timeslice", 1)]["energy"]
        self.assertTrue(energy["available"], energy)
        self.assertNotIn("per_unit_reason", energy)
        with open(log) as f:
            spans = [float(line.split("=")[1]) for line in f]
        self.assertTrue(all(1.2 < s < 1.6 for s in spans), spans)  # the counting's 1.5 s, not its run's 2.3 s
        self.assertAlmostEqual(energy["joules_per_unit"], energy["joules"] / energy["work"])
        self.assertAlmostEqual(energy["joules_per_unit"], 2.5, delta=0.15)

    def test_unavailable_says_why_never_zero(self):
        r = self.sweep(self.gpu_args(f"{FAKE_APP} --sleep 0.05", "--meter", FAKE_METER, *QUICK, ranks="1",
                                     min_time="0.3"),
                       FAKE_PROBE_GPUS="2", FAKE_METER_NO_GPM="GPM needs Hopper or later")
        self.assertEqual(r.returncode, 0, r.stderr)
        rec = self.results()[("timeslice", 1)]
        self.assertTrue(rec["energy"]["available"])
        self.assertGreater(rec["energy"]["joules_per_unit"], 0)
        self.assertEqual(rec["energy"]["work_unit"], "run")
        runs = sum(rec["app"]["runs_per_repetition"])
        self.assertAlmostEqual(rec["energy"]["joules_per_unit"], rec["energy"]["joules"] / runs)
        self.assertEqual((rec["energy"]["joules_per_run"], rec["energy"]["work"]),
                         (rec["energy"]["joules_per_unit"], runs))
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
