"""mpsbench-sweep --app: farming a program whose run time is known, on the CPU device and against fakes
(fake_probe.py for mpsbench-probe, the fake MPS control program, fake_mpirun.py for an MPI launcher)."""
import os
import signal
import sys
import time
import unittest

from sweeptest import FAKE_CONTROL, FAKE_FANOUT, HERE, SweepTestCase

from mpsbench_core import stats  # noqa: E402
from mpsbench_core.round_order import mode_order  # noqa: E402
from mpsbench_core.stats import percentile  # noqa: E402
from mpsbench_sweep.app.results import AppConfiguration  # noqa: E402
from mpsbench_sweep.app.settings import default_name  # noqa: E402

FAKE_APP = os.path.join(HERE, "fake_app.py")
FAKE_PROBE = os.path.join(HERE, "fake_probe.py")
FAKE_MPIRUN = os.path.join(HERE, "fake_mpirun.py")


class AppTestCase(SweepTestCase):
    def setUp(self):
        super().setUp()
        self.app_dir = os.path.join(self.tmp, "app")
        os.mkdir(self.app_dir)
        self.env["FAKE_APP_DIR"] = self.app_dir

    def app_args(self, app, *extra, modes="timeslice", ranks="1,2", min_time="1", rounds="1"):
        return (["--app", app, "--modes", modes, "--ranks-per-gpu", ranks, "--rounds", rounds]
                + (["--min-time", min_time] if min_time else [])
                + ["--output", self.output, "--mps-control", FAKE_CONTROL, "--mps-quit-grace", "2",
                   "--mps-ready-timeout", "5"] + list(extra))

    def cpu_args(self, app, *extra, **kw):
        return self.app_args(app, "--device", "cpu", *extra, **kw)

    def gpu_args(self, app, *extra, **kw):
        return self.app_args(app, "--device", "gpu", "--gpus-per-node", "2", "--probe", FAKE_PROBE, *extra, **kw)

    def results(self):
        return {(r["mode"], r["ranks_per_gpu"]): r for r in self.merged()["results"]}

    def copies_log(self):
        with open(os.path.join(self.app_dir, "copies.log")) as f:
            return [dict(field.split("=", 1) for field in line.split()) for line in f]


class Protocol(AppTestCase):
    def test_sleep_gives_five_and_ten_runs_per_second(self):
        r = self.sweep(self.cpu_args("sleep 0.2", "--repetitions", "2"))
        self.assertEqual(r.returncode, 0, r.stderr)
        results = self.results()
        for k, expected in ((1, 5.0), (2, 10.0)):
            rec = results[("timeslice", k)]
            self.assertEqual((rec["kind"], rec["app"]["name"], rec["primary_metric"], rec["primary_unit"]),
                             ("app", "sleep", "run_per_s", "run/s"))
            for absent in ("kernel", "precision", "size", "params", "ranks", "tenants", "work_per_iteration"):
                self.assertNotIn(absent, rec)
            runs_per_s = rec["aggregate"]["run_per_s"]["median"]
            self.assertAlmostEqual(runs_per_s, expected, delta=expected * 0.1, msg=rec)
            self.assertEqual(rec["app"]["runs_per_repetition"], [5 * k, 5 * k])
            self.assertGreaterEqual(min(rec["window_s"]), 1.0)
            self.assertAlmostEqual(rec["app"]["run_time_s"]["median"], 0.2, delta=0.05)
            self.assertEqual(len(rec["copies"]), k)
            self.assertGreater(rec["jain_fairness"], 0.99)
        self.assertAlmostEqual(results[("timeslice", 2)]["speedup_vs_one_copy_per_gpu"], 2.0, delta=0.2)
        # One copy per GPU is its own reference: 1, never null (core speedup.py).
        self.assertEqual(results[("timeslice", 1)]["speedup_vs_one_copy_per_gpu"], 1.0)
        self.assertIn("verdict: sleep: best timeslice at 2 copies per GPU", r.stdout)
        self.assertTrue(self.merged()["complete"])
        self.assert_clean()

    def test_a_run_failing_on_its_third_run_fails_its_configuration_and_the_sweep_goes_on(self):
        r = self.sweep(self.cpu_args(f"{FAKE_APP} --fail-on-run 3 --sleep 0.05", "--repetitions", "2",
                                     "--no-warmup", ranks="1"))
        self.assertEqual(r.returncode, 1, r.stderr)
        rec = self.results()[("timeslice", 1)]
        self.assertEqual(rec["status"], "failed")
        self.assertIn("copy 0", rec["error"])
        self.assertIn("exited with status 7", rec["error"])
        (failed,) = rec["app"]["failed_runs"]
        self.assertEqual((failed["copy"], failed["exit_code"], failed["run"]), (0, 7, 2))
        self.assertIn("simulated failure", failed["stderr_tail"])
        self.assertIn("run_failed", r.stderr)
        self.assert_clean()

    def test_other_configurations_still_run_after_one_fails(self):
        r = self.sweep(self.cpu_args(f"{FAKE_APP} --fail-on-run 1 --fail-copy 1 --sleep 0.05", ranks="1,2"))
        self.assertEqual(r.returncode, 1, r.stderr)
        results = self.results()
        self.assertEqual(results[("timeslice", 1)]["status"], "ok")
        self.assertEqual(results[("timeslice", 2)]["status"], "failed")
        self.assertIn("copy 1", results[("timeslice", 2)]["error"])

    def test_a_run_killed_by_a_signal(self):
        r = self.sweep(self.cpu_args(f"{FAKE_APP} --signal-on-run 1", ranks="1"))
        self.assertEqual(r.returncode, 1, r.stderr)
        self.assertIn("killed by signal 9", self.results()[("timeslice", 1)]["error"])
        self.assert_clean()

    def test_a_hung_run_is_ended_by_the_timeout(self):
        started = time.monotonic()
        r = self.sweep(self.cpu_args(f"{FAKE_APP} --hang-on-run 2 --sleep 0.05", "--timeout", "4", ranks="2"))
        self.assertEqual(r.returncode, 1, r.stderr)
        self.assertIn("still running after --timeout 4 s", self.results()[("timeslice", 2)]["error"])
        self.assertLess(time.monotonic() - started, 30)
        self.assert_clean()

    def test_app_check_decides_whether_a_run_counts(self):
        good = "sh -c 'grep -q result=ok \"$MPSBENCH_APP_STDOUT\"'"
        r = self.sweep(self.cpu_args(f"{FAKE_APP} --sleep 0.05", "--app-check", good, ranks="1"))
        self.assertEqual(r.returncode, 0, r.stderr)
        rec = self.results()[("timeslice", 1)]
        self.assertTrue(rec["verified"])
        self.assertGreater(rec["copies"][0]["check"]["checked_runs"], 10)
        self.assertEqual(rec["copies"][0]["check"]["failed_runs"], 0)
        bad = "sh -c 'grep -q result=wrong \"$MPSBENCH_APP_STDOUT\"'"
        r = self.sweep(self.cpu_args(f"{FAKE_APP} --sleep 0.05", "--app-check", bad, ranks="1"))
        self.assertEqual(r.returncode, 1, r.stderr)
        rec = self.results()[("timeslice", 1)]
        self.assertFalse(rec["verified"])
        self.assertEqual(rec["app"]["runs_per_repetition"], [0, 0, 0])
        self.assertTrue(rec["app"]["failed_checks"])

    def test_warmup_is_one_untimed_run_per_copy(self):
        self.sweep(self.cpu_args(f"{FAKE_APP} --sleep 0.05", "--repetitions", "1", ranks="2"))
        counted = self.results()[("timeslice", 2)]["app"]["runs_per_repetition"][0]
        self.assertEqual(len(self.copies_log()), counted + 2)


class RecordConsistency(AppTestCase):
    """Every derived field of an application's record agrees with the fields it derives from (the analysis
    refuses a file where one does not)."""

    def check(self, rec, one_copy=None):
        app, copies = rec["app"], rec["copies"]
        self.assertEqual(rec["kind"], "app")
        self.assertEqual(rec["verified"], all(c["check"]["ok"] for c in copies) and not app["failed_checks"])
        self.assertEqual(bool(app["failed_checks"]), any(c["check"]["failed_runs"] for c in copies))
        if rec["status"] != "ok":
            self.assertEqual((rec["aggregate"], copies, rec["window_s"], rec["verified"]), (None, [], [], False))
            return
        samples = rec["aggregate"]["run_per_s"]["samples"]
        self.assertEqual(samples, [n / w for n, w in zip(app["runs_per_repetition"], rec["window_s"])])
        self.assertEqual(rec["aggregate"]["run_per_s"]["median"], stats.median(samples))
        self.assertAlmostEqual(app["runs_per_hour"], stats.median(samples) * 3600)
        self.assertAlmostEqual(rec["aggregate_cv"], stats.coefficient_of_variation(samples))
        self.assertEqual(sum(c["runs"] for c in copies), sum(app["runs_per_repetition"]))
        self.assertEqual(len(copies), rec["active_ranks"])
        self.assertEqual(len(rec["window_s"]), rec["repetitions"])
        self.assertAlmostEqual(rec["jain_fairness"], stats.jain_fairness([c["throughput_per_s"] for c in copies]))
        if one_copy is not None:
            self.assertAlmostEqual(rec["speedup_vs_one_copy_per_gpu"], stats.median(samples) / one_copy)
        for c in copies:
            self.assertEqual(c["check"]["ok"], c["check"]["failed_runs"] == 0)
            self.assertLessEqual(c["check"]["failed_runs"], c["check"]["checked_runs"])

    def test_records_with_and_without_failed_checks(self):
        # Copy 1 fails the check on its third run: its configuration at k=2 is not verified.
        check = "sh -c 'test \"$MPSBENCH_APP_COPY\" != 1 || ! grep -q run=3 \"$MPSBENCH_APP_STDOUT\"'"
        r = self.sweep(self.cpu_args(f"{FAKE_APP} --sleep 0.05", "--app-check", check, "--repetitions", "2",
                                     ranks="1,2", min_time="0.5"))
        self.assertEqual(r.returncode, 1, r.stderr)
        results = self.results()
        alone = results[("timeslice", 1)]
        self.check(alone)
        self.assertTrue(alone["verified"])
        self.check(results[("timeslice", 2)], one_copy=alone["aggregate"]["run_per_s"]["median"])
        self.assertFalse(results[("timeslice", 2)]["verified"])
        self.assertEqual([c["check"]["failed_runs"] for c in results[("timeslice", 2)]["copies"]], [0, 1])


class OnGpusEveryModeAndRound(AppTestCase):
    """Copy i on GPU i mod G by UUID; the probe's view checked against each mode and round (fakes). A class of
    its own: twelve jobs, the longest test of the module, so ctest runs it beside the others (OnGpus)."""

    def test_copies_pinned_by_uuid_and_mps_state_verified_in_every_mode_and_round(self):
        modes = ("timeslice", "mps", "mps-qos")
        # One repetition of short windows: what is checked is where each copy ran, the MPS state and the
        # speedups of each round, not the figures themselves.
        r = self.sweep(self.gpu_args(f"{FAKE_APP} --sleep 0.05", "--repetitions", "1", modes=",".join(modes),
                                     ranks="1,2", min_time="0.1", rounds="2"),
                       FAKE_PROBE_GPUS="2", FAKE_JOB_CONTROL=FAKE_CONTROL)
        self.assertEqual(r.returncode, 0, r.stderr)
        doc = self.merged()
        results = {(x["mode"], x["ranks_per_gpu"], x["round"]): x for x in doc["results"]}
        self.assertEqual(sorted(results), sorted((m, k, n) for m in modes for k in (1, 2) for n in (0, 1)))
        # Per round, at each k every mode side by side (k=1 first); a daemon per stretch of one MPS mode, also
        # where round 1 starts with the mode round 0 ended with.
        sweep = doc["context"]["sweep"]
        self.assertEqual([(j["round"], j["ranks_per_gpu"], j["mode"]) for j in sweep["jobs"]],
                         [(n, [k], m) for n in (0, 1) for k in (1, 2) for m in mode_order(modes, n)])
        self.assertEqual([(d["round"], d["mode"]) for d in sweep["daemons"]],
                         [(n, m) for n in (0, 1) for k in (1, 2) for m in mode_order(modes, n) if m != "timeslice"])
        # A round's speedups are over its own one-copy run.
        for mode in modes:
            for n in (0, 1):
                one, two = (results[(mode, k, n)]["aggregate"]["run_per_s"]["median"] for k in (1, 2))
                self.assertEqual(results[(mode, 2, n)]["speedup_vs_one_copy_per_gpu"], two / one)
                self.assertEqual(results[(mode, 1, n)]["speedup_vs_one_copy_per_gpu"], 1.0)
        rec = results[("mps-qos", 2, 1)]
        self.assertEqual(rec["mps_active_thread_percentage"], 50)
        self.assertEqual([(c["gpu_uuid"], c["gpu_index"], c["mps_enabled"], c["sm_count"]) for c in rec["copies"]],
                         [("GPU-fake-0", 0, True, 66), ("GPU-fake-1", 1, True, 66),
                          ("GPU-fake-0", 0, True, 66), ("GPU-fake-1", 1, True, 66)])
        for line in self.copies_log():
            self.assertEqual(line["cuda_visible_devices"], f"GPU-fake-{int(line['copy']) % 2}")
        self.assertIn("MPS gain", r.stdout)
        self.assertIn("verdict: fake_app.py:", r.stdout)
        self.assertEqual(self.merged()["context"]["tool"], "mpsbench-sweep")
        self.assert_clean()


class OnGpus(AppTestCase):
    """Copies on GPUs (fakes): the probe against the mode, too few GPUs, an MPI application, SIGINT."""

    def test_a_probe_that_contradicts_the_mode_stops_the_sweep(self):
        r = self.sweep(self.gpu_args(f"{FAKE_APP} --sleep 0.05", modes="mps", ranks="1"),
                       FAKE_PROBE_GPUS="2", FAKE_JOB_CONTROL=FAKE_CONTROL, FAKE_PROBE_LIE="1")
        self.assertEqual(r.returncode, 3, r.stderr)
        self.assertIn("MPS state is not what the mode needs", r.stderr)
        self.assert_clean()

    def test_too_few_gpus_on_a_node_fails_the_configuration(self):
        # The sweep's own node is checked before anything starts (test_device_gpu.py); another node's farmer
        # finds it out itself and fails the configuration (exit 1): here the fan-out's second "node".
        r = self.sweep(self.gpu_args(f"{FAKE_APP} --sleep 0.05", "--nodes", "2", "--node-launcher",
                                     f"{sys.executable} {FAKE_FANOUT} {{nodes}}", ranks="1"), FAKE_PROBE_GPUS="1")
        self.assertEqual(r.returncode, 1, r.stderr)
        self.assertIn("1 GPU(s) visible here, 2 per node requested", self.results()[("timeslice", 1)]["error"])

    def test_mpi_application_one_run_is_one_launch_and_each_rank_sees_one_gpu(self):
        r = self.sweep(self.gpu_args(f"{FAKE_APP} --sleep 0.05", "--app-launcher",
                                     f"{sys.executable} {FAKE_MPIRUN} -n {{np}}", ranks="2", min_time="0.5"),
                       FAKE_PROBE_GPUS="2")
        self.assertEqual(r.returncode, 0, r.stderr)
        rec = self.results()[("timeslice", 2)]
        self.assertEqual(rec["active_ranks"], 1)  # one launch of 4 ranks per run
        self.assertEqual(rec["app"]["launcher"], f"{sys.executable} {FAKE_MPIRUN} -n {{np}}")
        lines = self.copies_log()
        self.assertEqual({(line["local_rank"], line["gpu"], line["cuda_visible_devices"]) for line in lines},
                         {("0", "0", "0"), ("1", "1", "1"), ("2", "0", "0"), ("3", "1", "1")})

    def test_sigint_mid_run_leaves_no_copy_and_no_daemon(self):
        proc = self.start_sweep(self.gpu_args(f"{FAKE_APP} --sleep 30", modes="mps", ranks="2"),
                                FAKE_PROBE_GPUS="2", FAKE_JOB_CONTROL=FAKE_CONTROL, FAKE_MPS_SPAWN_SERVER="1")
        deadline = time.monotonic() + 30
        while not os.path.exists(os.path.join(self.app_dir, "copies.log")) or len(self.copies_log()) < 4:
            self.assertIsNone(proc.poll(), proc.stderr.read() if proc.poll() is not None else "")
            self.assertLess(time.monotonic(), deadline, "the copies did not start")
            time.sleep(0.05)
        proc.send_signal(signal.SIGINT)
        _, err = proc.communicate(timeout=60)
        self.assertEqual(proc.returncode, 130, err)
        self.assertIn("interrupted", err)
        self.assert_clean()


class Refusals(AppTestCase):
    def check(self, args, message):
        r = self.sweep(args)
        self.assertEqual(r.returncode, 2, r.stderr)
        self.assertIn(message, r.stderr)
        self.assertEqual(len(r.stderr.strip().splitlines()), 1, r.stderr)

    def test_bad_app_input(self):
        self.check(self.cpu_args("sleep 1", modes="timeslice,streams"), "streams does not apply to an external "
                                                                        "program")
        self.check(self.cpu_args("sleep 1", modes="mps"), "--device cpu: only --modes timeslice")
        self.check(self.cpu_args("no-such-program-xyz"), "'no-such-program-xyz' is not an executable program")
        self.check(self.cpu_args("sleep 'unterminated"), "cannot split")
        self.check(self.cpu_args(""), "argument --app: '' is empty")  # refused as every empty value (cli.given)
        self.check(self.cpu_args("sleep 1") + ["--", "--kernel", "matmul"], "with --app no mpsbench runs")
        self.check(self.cpu_args("sleep 1", min_time="0"), "--min-time: 0 must be in")
        self.check(["--app-name", "x", "--output", self.output], "--app-name: applies to --app only")
        self.check(self.gpu_args("sleep 1", "--probe", os.path.join(self.tmp, "none")), "--probe:")


class Arithmetic(unittest.TestCase):
    """The record's figures from hand-made farmer reports, against values computed by hand."""

    @staticmethod
    def run_(copy, rep, number, duration, exit_code=0):
        return {"copy": copy, "repetition": rep, "number": number, "start_s": 0.0, "duration_s": duration,
                "exit_code": exit_code, "signal": None, "stdout": "", "stderr": "", "stopped": False,
                "check_exit_code": None}

    def test_runs_per_second_fairness_percentiles_and_speedup(self):
        config = AppConfiguration(app={"name": "x", "command": ["x"]}, mode="mps", k=2, thread_percentage=None,
                                  device="cpu", copies_per_node=2, nodes=1, gpus_per_node=1, repetitions=2)
        config.probed = [{"host": "h", "gpus": [], "states": []}]
        # Repetition 0: copy 0 ran 3 x 1 s, copy 1 ran 2 x 1.5 s, window 3.0 s -> 5 runs / 3 s.
        # Repetition 1: copy 0 ran 2 x 2 s, copy 1 ran 2 x 2 s, window 4.0 s -> 4 runs / 4 s.
        config.windows = [
            [{"host": "h", "window_s": 3.0, "runs": [self.run_(0, 0, i, 1.0) for i in range(3)]
              + [self.run_(1, 0, i, 1.5) for i in range(2)]}],
            [{"host": "h", "window_s": 4.0, "runs": [self.run_(c, 1, i, 2.0) for c in (0, 1) for i in range(2)]}]]
        r = config.record(one_copy_median=0.5)
        self.assertEqual(r["status"], "ok")
        self.assertEqual(r["aggregate"]["run_per_s"]["samples"], [5 / 3, 1.0])
        self.assertAlmostEqual(r["aggregate"]["run_per_s"]["median"], (5 / 3 + 1.0) / 2)
        self.assertAlmostEqual(r["speedup_vs_one_copy_per_gpu"], (5 / 3 + 1.0) / 2 / 0.5)
        self.assertEqual(r["app"]["runs_per_repetition"], [5, 4])
        self.assertAlmostEqual(r["app"]["runs_per_hour"], (5 / 3 + 1.0) / 2 * 3600)
        # copy 0: 5 runs in 7 s busy; copy 1: 4 runs in 7 s -> Jain = (5/7 + 4/7)^2 / (2 (25 + 16) / 49)
        self.assertAlmostEqual(r["copies"][0]["throughput_per_s"], 5 / 7)
        self.assertEqual([c["runs"] for c in r["copies"]], [5, 4])
        self.assertAlmostEqual(r["jain_fairness"], (9 / 7) ** 2 / (2 * 41 / 49))
        durations = [1.0] * 3 + [1.5] * 2 + [2.0] * 4
        self.assertEqual(r["app"]["run_time_s"], {"median": 1.5, "p95": 2.0, "min": 1.0, "max": 2.0})
        self.assertAlmostEqual(percentile(durations, 50), 1.5)
        self.assertAlmostEqual(percentile([1.0, 2.0, 3.0, 4.0], 95), 3.85)
        self.assertEqual(r["copies"][1]["run_time_s"]["samples"], [1.5, 2.0])

    def test_a_failed_configuration_has_no_measurements(self):
        config = AppConfiguration(app={"name": "x", "command": ["x"]}, mode="timeslice", k=1, thread_percentage=None,
                                  device="cpu", copies_per_node=1, nodes=1, gpus_per_node=1, repetitions=3)
        config.fail("copy 0 on h, repetition 1 run 1, exited with status 7")
        r = config.record()
        self.assertEqual((r["status"], r["aggregate"], r["copies"], r["window_s"]), ("failed", None, [], []))

    def test_default_names(self):
        self.assertEqual(default_name(["/usr/bin/python3", "-u", "examples/torch_matmul_cpu.py", "--size", "8"]),
                         "torch_matmul_cpu")
        self.assertEqual(default_name(["build/small-kernels", "--launches", "9"]), "small-kernels")
        self.assertEqual(default_name(["sh", "-c", "x; y"]), "sh")


if __name__ == "__main__":
    unittest.main()
