"""Every figure a farmed program prints is checked once, where it is read (issue 36, numbers from a program):
a rate above 0 and within range (its rate per second too), a counter within range that never goes back, each
read from its whole line. Otherwise its configuration fails with one line naming the pattern and the value:
no traceback, a results file that stays JSON (no Infinity or NaN), nothing left behind, never "ok"."""
import json
import os
import tempfile
import unittest

from test_app import FAKE_APP, AppTestCase

from mpsbench_sweep.app.metric import (MAX_LINE_BYTES, BadFigure, Lines, MetricSpec, ProgressLines,  # noqa: E402
                                       checked_figure, scan_rate)

RATE = r"rate: (\S+)"
COUNTER = r"^(\S+),progress"
METRIC = MetricSpec("metric", RATE, "units/s")
PROGRESS = MetricSpec("progress", COUNTER, "steps/s")


class Checked(unittest.TestCase):
    def test_rates_outside_the_range_are_refused_naming_the_value(self):
        for text, why in (("-5", "must be above 0"), ("0", "must be above 0"), ("1e308", "out of range"),
                          ("1e-40", "out of range"), ("1e400", "not a number"), ("nan", "not a number"),
                          ("inf", "not a number"), ("", "not a number")):
            with self.subTest(text=text), self.assertRaises(BadFigure) as caught:
                checked_figure(METRIC, text, f"rate: {text} units/s")
            self.assertIn(why, str(caught.exception))
            self.assertIn(f"rate: {text} units/s", str(caught.exception))
        self.assertEqual(checked_figure(METRIC, "5,882", "rate: 5,882"), 5882.0)

    def test_a_rate_whose_rate_per_second_leaves_the_range(self):
        # 1e-27 ns/day is 1.2e-32 ns per second: below what the statistics keep above 0.
        self.assertEqual(checked_figure(METRIC, "1e-27", "x"), 1e-27)
        with self.assertRaisesRegex(BadFigure, "rate per second"):
            checked_figure(MetricSpec("metric", RATE, "ns/day"), "1e-27", "x")

    def test_counters(self):
        self.assertEqual(checked_figure(PROGRESS, "0", "0,progress"), 0.0)
        self.assertEqual(checked_figure(PROGRESS, "7", "7,progress", previous=7.0), 7.0)
        for text, previous, why in (("-1", None, "out of range"), ("1e31", None, "out of range"),
                                    ("3", 5.0, "went down from 5 to 3")):
            with self.subTest(text=text), self.assertRaisesRegex(BadFigure, why):
                checked_figure(PROGRESS, text, f"{text},progress", previous)


class WholeLines(unittest.TestCase):
    def test_a_line_is_read_whole_across_reads(self):
        lines = Lines()
        self.assertEqual(lines.push(b"rate: 12"), [])
        self.assertEqual(lines.push(b"345 units/s\n1,p\r2,p"), ["rate: 12345 units/s", "1,p"])
        self.assertEqual(lines.end(), ["2,p"])
        self.assertEqual(Lines().push(b"x" * MAX_LINE_BYTES + b"\n"), ["x" * MAX_LINE_BYTES])

    def test_a_line_longer_than_the_bound_is_refused_not_cut(self):
        for chunks in ([b"x" * (MAX_LINE_BYTES + 1)], [b"x" * MAX_LINE_BYTES, b"12345\n"]):
            lines = Lines()
            with self.assertRaisesRegex(BadFigure, "longer than 1 MiB"):
                for chunk in chunks:
                    lines.push(chunk)

    def test_scanning_a_run_s_stdout(self):
        with tempfile.TemporaryDirectory() as tmp:
            path = os.path.join(tmp, "out")

            def scan(data):
                with open(path, "wb") as f:
                    f.write(data)
                return scan_rate(path, METRIC)

            cut = scan(b"x" * (MAX_LINE_BYTES - 8) + b"rate: 12345 units/s\n")
            self.assertEqual((cut.value, cut.line), (None, None))
            self.assertIn("longer than 1 MiB", cut.problem)
            whole = scan(b"x" * (MAX_LINE_BYTES - 30) + b"rate: 12345 units/s\n")
            self.assertEqual((whole.value, whole.problem), (12345.0, None))
            # A progress bar redrawn 60,000 times without a newline: short lines, each ended by "\r".
            bar = scan(b"".join(b"\rrate: %d it" % i for i in range(1, 60001)) + b"\n")
            self.assertEqual((bar.value, bar.problem), (60000.0, None))
            bad = scan(b"rate: 5\nrate: -1e3\n")
            self.assertIn("printed the rate -1e3 ('rate: -1e3'): a rate must be above 0", bad.problem)

    def test_counter_lines_as_they_arrive(self):
        lines = ProgressLines(PROGRESS, 0.5)
        lines.feed(b"1", 1.0)
        lines.feed(b"2345,progress\n20000,progress\n3", 2.0)
        lines.end(3.0)  # the last line, "3,progress" cut short by the end of output: "3" does not match
        self.assertEqual(lines.record(), {"samples": [[1.5, 12345.0], [1.5, 20000.0]], "lines": 2, "error": None})
        lines.feed(b"30000,progress\n1000,progress\n", 4.0)
        self.assertIn("went down from 30000 to 1000", lines.record()["error"])
        lines.feed(b"40000,progress\n", 5.0)  # after the first bad figure nothing more is taken
        self.assertEqual([v for _, v in lines.samples], [12345.0, 20000.0, 30000.0])


class Sweeps(AppTestCase):
    def configuration_fails(self, app, *extra, pattern=RATE, method="--app-metric", ranks="1,2", **kw):
        """Runs the sweep; every configuration must fail with one line naming the pattern; returns the errors."""
        r = self.sweep(self.cpu_args(app, method, pattern, "--repetitions", "1", *extra, ranks=ranks, **kw))
        self.assertEqual(r.returncode, 1, r.stderr)
        self.assertNotIn("Traceback", r.stderr + r.stdout)
        with open(self.output) as f:
            text = f.read()
        json.loads(text, parse_constant=lambda c: self.fail(f"{c} in the results file"))
        errors = []
        for rec in self.merged()["results"]:
            self.assertEqual((rec["status"], rec["verified"], rec["aggregate"]), ("failed", False, None))
            self.assertTrue(rec["error"].startswith(f"{method} '{pattern}': copy 0 on "), rec["error"])
            self.assertNotIn("\n", rec["error"])
            errors.append(rec["error"])
        self.assertEqual(len(errors), len(ranks.split(",")))
        self.assert_clean()
        return errors

    def test_a_huge_rate(self):
        # 1e308 at two copies overflowed to Infinity, and ended in a traceback with a directory left behind.
        for error in self.configuration_fails(f"{FAKE_APP} --sleep 0.05 --rate 1e308", "--no-warmup"):
            self.assertIn("repetition 1 run 1: printed the rate 1e+308 ('rate: 1e+308 units/s'): out of range",
                          error)

    def test_a_negative_rate_is_never_ok(self):
        for error in self.configuration_fails(f"{FAKE_APP} --sleep 0.05 --rate -5", ranks="1"):
            self.assertIn("warm-up run: printed the rate -5.0 ('rate: -5.0 units/s'): a rate must be above 0",
                          error)

    def test_a_line_longer_than_the_farmer_reads_whole(self):
        # Read in pieces, "rate: 12345.0" at the edge of one was taken as 12.
        app = f"{FAKE_APP} --sleep 0.05 --rate 12345 --pad-line {MAX_LINE_BYTES - 8}"
        for error in self.configuration_fails(app, ranks="1"):
            self.assertIn("a line of its stdout is longer than 1 MiB", error)

    def test_a_counter_out_of_range(self):
        app = f"{FAKE_APP} --count-rate 1e40 --count-for 0.3"
        for error in self.configuration_fails(app, "--no-warmup", pattern=COUNTER, method="--app-progress",
                                              ranks="1", min_time=None):
            self.assertIn("out of range: a counter of work done so far lies within 0 to 1e+30", error)


if __name__ == "__main__":
    unittest.main()
