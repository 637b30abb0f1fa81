"""mpsbench-sweep --app with the program's own figure (--app-metric, --app-progress), on the CPU device with a
fake program whose figures are known: the exact sum of reported rates, a counter's pace after a slow start,
and a program that never prints a match."""
import os
import subprocess
import sys
import unittest

from sweeptest import REPO
from test_app import FAKE_APP, AppTestCase

from mpsbench_sweep.app.figures import FigureError, metric_figures, progress_figures  # noqa: E402
from mpsbench_sweep.app.metric import MetricSpec, checked_figure, number, BadFigure  # noqa: E402

TOGETHER = os.path.join(REPO, "examples", "together.py")
RATE = r"rate: ([0-9.]+)"
COUNTER = r"^([0-9.]+),progress"


class ReportedRate(AppTestCase):
    def test_the_figure_is_the_exact_sum_of_the_copies_rates(self):
        # Copy i reports 10 x (i + 1) units/s: 10 alone, 10 + 20 = 30 at two copies per GPU, every repetition.
        r = self.sweep(self.cpu_args(f"{FAKE_APP} --rate copy --sleep 0.2", "--app-metric", RATE,
                                     "--app-metric-unit", "ns/day", "--repetitions", "2", ranks="1,2"))
        self.assertEqual(r.returncode, 0, r.stderr)
        results = self.results()
        for k, expected in ((1, 10.0), (2, 30.0)):
            rec = results[("timeslice", k)]
            self.assertEqual((rec["primary_metric"], rec["primary_unit"]), ("metric_per_s", "ns/day"))
            self.assertEqual(rec["aggregate"]["metric_per_s"]["samples"], [expected, expected])
            self.assertIn("run_per_s", rec["aggregate"])
            self.assertGreater(rec["app"]["runs_per_hour"], 0)
            metric = rec["app"]["metric"]
            self.assertEqual((metric["method"], metric["regex"], metric["unit"]), ("metric", RATE, "ns/day"))
            self.assertEqual([c["metric_per_s"]["median"] for c in rec["copies"]], [10.0, 20.0][:k])
            self.assertEqual(metric["unrated_runs"], 0)
            self.assertEqual(metric["rated_runs"], sum(rec["app"]["runs_per_repetition"]))
        pair = results[("timeslice", 2)]
        self.assertAlmostEqual(pair["app"]["metric"]["copy_spread"], (20 - 10) / 15)
        self.assertAlmostEqual(pair["jain_fairness"], 30 ** 2 / (2 * (100 + 400)))
        self.assertAlmostEqual(pair["speedup_vs_one_copy_per_gpu"], 3.0)
        self.assertIn("30.0 ns/day", r.stdout)
        self.assertIn("verdict: fake_app.py: best timeslice at 2 copies per GPU, 30.0 ns/day", r.stdout)

    def test_a_program_that_never_prints_a_match_fails_its_configuration_naming_the_pattern(self):
        pattern = r"ns_per_day: ([0-9.]+)"
        r = self.sweep(self.cpu_args(f"{FAKE_APP} --sleep 0.05", "--app-metric", pattern, "--repetitions", "1",
                                     ranks="1"))
        self.assertEqual(r.returncode, 1, r.stderr)
        rec = self.results()[("timeslice", 1)]
        self.assertEqual(rec["status"], "failed")
        self.assertIn(f"--app-metric '{pattern}': copy 0 on ", rec["error"])
        self.assertIn("printed no line of its stdout matching it", rec["error"])
        failed = [line for line in r.stderr.splitlines() if "run_failed" in line]
        self.assertEqual(len(failed), 1, r.stderr)
        self.assertIn(pattern, failed[0])
        self.assertEqual((rec["energy"]["available"], rec["primary_unit"]), (False, None))

    def test_a_figure_taken_partly_alone_is_said(self):
        # Copy 1's runs last 0.6 s longer than copy 0's, one run per window: 0.6 of its 1.0 s ran beside copy 0.
        r = self.sweep(self.cpu_args(f"{FAKE_APP} --rate copy --sleep 0.4 --sleep-per-copy 0.6", "--app-metric",
                                     RATE, "--repetitions", "1", "--no-warmup", ranks="1,2", min_time="0.01"))
        self.assertEqual(r.returncode, 0, r.stderr)
        shared = self.results()[("timeslice", 2)]["app"]["metric"]["least_shared"]
        self.assertLess(shared, 0.75)
        self.assertGreater(shared, 0.2)
        self.assertIsNone(self.results()[("timeslice", 1)]["app"]["metric"]["least_shared"])
        notes = [line for line in r.stderr.splitlines() if "partly taken with the GPU not shared" in line]
        self.assertEqual(len(notes), 1, r.stderr)
        self.assertIn("timeslice k=2", notes[0])

    def test_a_figure_on_stderr_fails_saying_so(self):
        # tqdm and friends write to stderr: the figure is read from stdout, and the failure says where it is.
        r = self.sweep(self.cpu_args(f"{FAKE_APP} --sleep 0.05 --rate 5 --figure-to-stderr", "--app-metric", RATE,
                                     "--repetitions", "1", ranks="1"))
        self.assertEqual(r.returncode, 1, r.stderr)
        error = self.results()[("timeslice", 1)]["error"]
        self.assertIn("printed no line of its stdout matching it", error)
        self.assertIn("its stderr has a matching line ('rate: 5.0 units/s')", error)
        self.assertIn("2>&1", error)
        self.assertNotIn("\n", error)

    def test_a_match_that_is_not_a_number(self):
        r = self.sweep(self.cpu_args(f"{FAKE_APP} --sleep 0.05 --rate-text fast", "--app-metric", r"rate: (\S+)",
                                     "--repetitions", "1", ranks="1"))
        self.assertEqual(r.returncode, 1, r.stderr)
        self.assertIn("whose group is not a number: 'rate: fast units/s'", self.results()[("timeslice", 1)]["error"])


class Counter(AppTestCase):
    def test_a_counter_at_a_known_pace_after_a_slow_start_gives_its_pace(self):
        # 1 s of start-up, then 100 per second for 2 s: the figure is 100 per copy, start-up excluded (a
        # figure over the whole run would be 100 x 2/3).
        r = self.sweep(self.cpu_args(f"{FAKE_APP} --startup 1 --count-rate 100 --count-for 2", "--app-progress",
                                     COUNTER, "--app-metric-unit", "steps/s", "--repetitions", "2", "--no-warmup",
                                     ranks="1,2", min_time=None))
        self.assertEqual(r.returncode, 0, r.stderr)
        for k in (1, 2):
            rec = self.results()[("timeslice", k)]
            self.assertEqual((rec["primary_metric"], rec["primary_unit"]), ("metric_per_s", "steps/s"))
            for sample in rec["aggregate"]["metric_per_s"]["samples"]:
                self.assertAlmostEqual(sample, 100.0 * k, delta=10.0 * k, msg=rec["app"]["metric"])
            self.assertEqual(rec["app"]["runs_per_repetition"], [k, k], "one run per copy per window")
            for copy in rec["copies"]:
                self.assertGreaterEqual(copy["startup_s"]["min"], 0.95)
                self.assertLess(copy["startup_s"]["max"], 2.0)
                self.assertAlmostEqual(copy["metric_per_s"]["median"], 100.0, delta=10.0)
            for window in rec["app"]["metric"]["common_window_s"]:
                self.assertGreater(window, 1.5)
                self.assertLess(window, 2.1)
            self.assertGreater(rec["app"]["startup_share"], 0.25)
            self.assertLess(rec["app"]["startup_share"], 0.5)
        self.assertIn("steps/s", r.stdout)
        self.assert_clean()

    def test_a_progress_bar_redrawn_after_carriage_returns(self):
        # "\rN it" on one line until the end, as tqdm draws: each redraw is a counter line of its own, timed as
        # it arrives (read up to a newline, every redraw would arrive at the end, at one time).
        bar = r"([0-9.]+) it"
        r = self.sweep(self.cpu_args(f"{FAKE_APP} --startup 0.5 --count-rate 100 --count-for 1.5 --count-bar",
                                     "--app-progress", bar, "--app-metric-unit", "it/s", "--repetitions", "1",
                                     "--no-warmup", ranks="1", min_time=None))
        self.assertEqual(r.returncode, 0, r.stderr)
        rec = self.results()[("timeslice", 1)]
        self.assertAlmostEqual(rec["aggregate"]["metric_per_s"]["median"], 100.0, delta=10.0, msg=rec["app"])
        self.assertGreaterEqual(rec["copies"][0]["startup_s"]["min"], 0.45)
        self.assertGreater(rec["app"]["metric"]["common_window_s"][0], 1.0)
        # And on stderr: the failure says where the counter is.
        r = self.sweep(self.cpu_args(f"{FAKE_APP} --count-rate 100 --count-for 0.3 --count-bar --figure-to-stderr",
                                     "--app-progress", bar, "--repetitions", "1", "--no-warmup", ranks="1",
                                     min_time=None))
        self.assertEqual(r.returncode, 1, r.stderr)
        self.assertIn("its stderr has a matching line", self.results()[("timeslice", 1)]["error"])

    def test_no_counter_line_and_a_counter_that_goes_down(self):
        r = self.sweep(self.cpu_args(f"{FAKE_APP} --sleep 0.05", "--app-progress", COUNTER, ranks="1", min_time=None))
        self.assertEqual(r.returncode, 1, r.stderr)
        error = self.results()[("timeslice", 1)]["error"]
        self.assertIn(f"--app-progress '{COUNTER}': copy 0 on ", error)
        self.assertIn("no line of its stdout matched it", error)
        r = self.sweep(self.cpu_args(f"{FAKE_APP} --count-rate 100 --count-for 0.5 --count-down", "--app-progress",
                                     COUNTER, ranks="1", min_time=None))
        self.assertEqual(r.returncode, 1, r.stderr)
        self.assertIn("the counter went down", self.results()[("timeslice", 1)]["error"])


class DirectMeasurement(AppTestCase):
    """examples/together.py, the by-hand measurement the sweep's figures are held against on a GPU machine."""

    def together(self, *args):
        return subprocess.run([sys.executable, TOGETHER] + list(args), capture_output=True, text=True, timeout=60,
                              env=self.env, cwd=self.tmp)

    def test_copies_started_together_and_their_sum(self):
        r = self.together("-k", "2", "--metric", RATE, "--", sys.executable, FAKE_APP, "--rate", "copy")
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertIn("sum: 30 units/s (2 copies)", r.stdout)
        r = self.together("-k", "2", "--progress", COUNTER, "--unit", "steps/s", "--", sys.executable, FAKE_APP,
                          "--startup", "0.5", "--count-rate", "100", "--count-for", "1.5")
        self.assertEqual(r.returncode, 0, r.stderr)
        total = float(r.stdout.split("sum: ")[1].split()[0])
        self.assertAlmostEqual(total, 200.0, delta=20.0)
        # A progress bar (carriage returns, one newline at the end): each redraw timed as it arrives.
        r = self.together("-k", "1", "--progress", r"([0-9.]+) it", "--", sys.executable, FAKE_APP,
                          "--startup", "0.5", "--count-rate", "100", "--count-for", "1.5", "--count-bar")
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertAlmostEqual(float(r.stdout.split("sum: ")[1].split()[0]), 100.0, delta=10.0)
        r = self.together("-k", "1", "--metric", RATE, "--", sys.executable, FAKE_APP)
        self.assertEqual(r.returncode, 1, r.stdout)
        # A rate that is no rate is no figure, and the sum says so by its status.
        for bad in ("-5", "inf", "0"):
            r = self.together("-k", "1", "--metric", r"rate=(\S+)", "--", "sh", "-c", f"echo rate={bad}")
            self.assertEqual(r.returncode, 1, r.stdout)
            self.assertIn("no figure units/s", r.stdout)
            self.assertIn(f"(it printed '{bad}': not a finite rate above 0)", r.stdout)


class Refusals(AppTestCase):
    def check(self, args, message):
        r = self.sweep(args)
        self.assertEqual(r.returncode, 2, r.stderr)
        self.assertIn(message, r.stderr)
        self.assertEqual(len(r.stderr.strip().splitlines()), 1, r.stderr)

    def test_bad_patterns_and_combinations(self):
        self.check(self.cpu_args("sleep 1", "--app-metric", "rate: [0-9]+"), "has no capture group")
        self.check(self.cpu_args("sleep 1", "--app-metric", "rate: ([0-9]"), "is not a regular expression")
        self.check(self.cpu_args("sleep 1", "--app-metric", RATE, "--app-progress", COUNTER), "give one")
        self.check(self.cpu_args("sleep 1", "--app-metric-unit", "ns/day"), "applies to --app-metric or")
        self.check(self.cpu_args("sleep 1", "--app-progress", COUNTER, min_time="5"), "each window is one run per")
        self.check(self.cpu_args("sleep 1", "--app-bind", "socket"), "--app-bind: unknown value 'socket'")
        self.check(self.cpu_args("sleep 1", "--app-bind", "core", "--app-launcher", "mpirun"),
                   "bound by its launcher's own options")
        self.check(["--app-metric", RATE, "--output", self.output], "--app-metric: applies to --app only")


class Arithmetic(unittest.TestCase):
    SPEC = MetricSpec("metric", RATE, "units/s")

    @staticmethod
    def run_(copy, start, duration, metric=None, number_=0):
        return {"copy": copy, "number": number_, "start_s": start, "duration_s": duration, "exit_code": 0,
                "check_exit_code": None, "metric": metric, "metric_line": None, "stdout": "out"}

    def test_only_runs_that_overlapped_every_other_copy_are_rated(self):
        # Copy 0 ran twice: 0-1 s with copy 1 running (rated), 5-6 s alone (not rated).
        windows = [[{"host": "h", "runs": [self.run_(0, 0.0, 1.0, 50.0), self.run_(0, 5.0, 1.0, 90.0, 1),
                                           self.run_(1, 0.0, 2.0, 40.0)]}]]
        got = metric_figures(self.SPEC, windows, 2)
        self.assertEqual((got["samples"], got["rated_runs"], got["unrated_runs"]), ([90.0], 2, 1))

    def test_how_much_of_each_rated_run_the_others_shared(self):
        # As OpenMM's 4 s runs under time slicing on the H100 (runs of 3.24 to 6.03 s at 2 copies): copy 0's
        # run 0-3.24 s lies inside copy 1's 0-6.03 s, but copy 1 ran 46 % of its run alone.
        windows = [[{"host": "h", "runs": [self.run_(0, 0.0, 3.24, 913.0), self.run_(1, 0.0, 6.03, 667.0)]}]]
        self.assertAlmostEqual(metric_figures(self.SPEC, windows, 2)["least_shared"], 3.24 / 6.03)
        # Three copies: copy 2 runs 1-3 s; copy 1 0-2 s and 2.5-4 s; copy 0 0-4 s. Copy 0 has both others
        # beside it in 1-2 and 2.5-3 s (1.5 of its 4 s), copy 1's first run in 1-2 s (1 of 2), its second
        # in 2.5-3 s: 0.5 of 1.5 s, the least.
        windows = [[{"host": "h", "runs": [self.run_(0, 0.0, 4.0, 1.0), self.run_(1, 0.0, 2.0, 1.0),
                                           self.run_(1, 2.5, 1.5, 1.0, 1), self.run_(2, 1.0, 2.0, 1.0)]}]]
        self.assertAlmostEqual(metric_figures(self.SPEC, windows, 3)["least_shared"], 0.5 / 1.5)
        # Runs side by side all the way: 1; one copy: nothing to share with.
        windows = [[{"host": "h", "runs": [self.run_(0, 0.0, 2.0, 1.0), self.run_(1, 0.0, 2.0, 1.0)]}]]
        self.assertEqual(metric_figures(self.SPEC, windows, 2)["least_shared"], 1.0)
        windows = [[{"host": "h", "runs": [self.run_(0, 0.0, 2.0, 1.0)]}]]
        self.assertIsNone(metric_figures(self.SPEC, windows, 1)["least_shared"])

    def test_progress_interpolates_inside_the_common_window(self):
        spec = MetricSpec("progress", COUNTER, "steps/s")

        def run(copy, start, samples):
            return {"copy": copy, "start_s": start, "duration_s": samples[-1][0] + 0.5 - start, "exit_code": 0,
                    "stdout": "out", "progress": {"samples": samples}}

        # Copy 0 counts 10/s from 1 s to 5 s; copy 1 counts 20/s from 2 s to 4 s: window 2-4 s, rates 10 + 20.
        windows = [[{"host": "h", "runs": [run(0, 0.0, [[1.0, 0.0], [5.0, 40.0]]),
                                           run(1, 0.0, [[2.0, 0.0], [3.0, 20.0], [4.0, 40.0]])]}]]
        got = progress_figures(spec, windows, 2)
        self.assertEqual((got["samples"], got["window_s"], got["startup_s"]), ([30.0], [2.0], {0: [1.0], 1: [2.0]}))
        windows[0][0]["runs"][1]["progress"]["samples"] = [[6.0, 0.0], [7.0, 10.0]]
        with self.assertRaisesRegex(FigureError, "no common window"):
            progress_figures(spec, windows, 2)

    def test_numbers_and_units(self):
        self.assertEqual([number(t) for t in ("5,882", "1e3", "-2", " 7 ", "٣", "nan", "x")],
                         [5882.0, 1000.0, -2.0, 7.0, None, None, None])
        # A rate's range is checked per second, with core's time units (energy.rate_unit): 1e29 ns/day is
        # about 1.2e24 ns/s (taken); 1e29 per minute or per second is taken; 1e31 of anything is not.
        spec = lambda unit: MetricSpec("metric", "r=(.*)", unit)  # noqa: E731
        for unit in ("ns/day", "it/s", "images/min", "score"):
            self.assertEqual(checked_figure(spec(unit), "1e29", "r=1e29"), 1e29)
            with self.assertRaisesRegex(BadFigure, "out of range"):
                checked_figure(spec(unit), "1e31", "r=1e31")
        # 1e-26 ns/day is about 1.2e-31 ns/s: below the smallest rate (1e-30/s); 1e-26 ns/s is not.
        with self.assertRaisesRegex(BadFigure, "out of range"):
            checked_figure(spec("ns/day"), "1e-26", "r=1e-26")
        self.assertEqual(checked_figure(spec("ns/s"), "1e-26", "r=1e-26"), 1e-26)


if __name__ == "__main__":
    unittest.main()
