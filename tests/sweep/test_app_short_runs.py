"""--app-progress with runs too short for their copies' start-up differences (issue 36): a figure within 5 % of
the copies' own, or a refusal that says how much more work each run needs; never a figure that is off.

The model: k copies on a time-sliced GPU, copy i starting i x stagger late, each doing `work` units at a rate
shared by the copies counting at the moment. Together they always do `rate` units per second, which the common
window measures; a copy's own figure (its counter from its first to its last line, as run by hand) also holds
the stretches it ran alone, so the two differ by about the start-up differences' share of the counting."""
import os
import sys
import unittest

from sweeptest import HERE
from test_app import AppTestCase

from mpsbench_sweep.app.figures import AGREE, FigureError, progress_figures  # noqa: E402
from mpsbench_sweep.app.metric import MetricSpec  # noqa: E402

SPEC = MetricSpec("progress", r"^([0-9.]+),progress", "steps/s")
FAKE_SHARED = os.path.join(HERE, "fake_shared_counter.py")


def time_sliced(k, stagger, work, rate=100.0, every=0.05, dt=0.001):
    """One repetition's window event of the model (module doc): each copy's counter lines every `every` s."""
    done, lines, t = [0.0] * k, [[] for _ in range(k)], 0.0
    while any(d < work for d in done):
        counting = [i for i in range(k) if t >= i * stagger and done[i] < work]
        for i in counting:
            if not lines[i] or t - lines[i][-1][0] >= every - dt / 2:
                lines[i].append([round(t, 6), done[i]])
            done[i] = min(work, done[i] + rate / len(counting) * dt)
            if done[i] >= work:
                lines[i].append([round(t + dt, 6), work])
        t += dt
    runs = [{"copy": i, "start_s": 0.0, "duration_s": s[-1][0] + 0.01, "exit_code": 0, "stdout": "out",
             "progress": {"samples": s}} for i, s in enumerate(lines)]
    return [[{"host": "h", "runs": runs}]]


class Rule(unittest.TestCase):
    def test_a_short_run_is_refused_saying_how_much_more_work_it_needs_and_that_much_is_taken(self):
        # Copy 1 starts 0.6 s late; 100 units each: together 0.8 s of a 1.4 s count (window 100 steps/s, the
        # copies' own 143 steps/s). Before the rule the sweep wrote 100 steps/s, 30 % from what they report.
        with self.assertRaises(FigureError) as caught:
            progress_figures(SPEC, time_sliced(2, 0.6, 100.0), 2)
        message = str(caught.exception)
        self.assertIn("repetition 1: the copies counted together for 0.80 s of their 1.40 s each", message)
        self.assertIn("100.0 steps/s, is 30% from the copies' own over their own counting, 143 steps/s", message)
        times = int(message.split("give each run at least ")[1].split("x the work")[0])
        self.assertEqual(times, 9)
        got = progress_figures(SPEC, time_sliced(2, 0.6, 100.0 * times), 2)
        own = sum(times * 100.0 / (s[-1][0] - s[0][0]) for s in
                  ([r["progress"]["samples"] for r in time_sliced(2, 0.6, 100.0 * times)[0][0]["runs"]]))
        self.assertLessEqual(abs(got["samples"][0] - own), AGREE * own)
        self.assertAlmostEqual(got["samples"][0], 100.0, delta=1.0)

    def test_copies_that_start_apart_but_do_not_slow_each_other_are_taken(self):
        # The same start-up difference under a mode where each copy keeps its pace (MPS with room to spare):
        # the common window and the copies' own agree, so the figure is taken however short the run.
        windows = time_sliced(1, 0.0, 100.0)
        late = time_sliced(1, 0.0, 100.0)[0][0]["runs"][0]
        late["copy"] = 1
        late["progress"]["samples"] = [[t + 0.6, v] for t, v in late["progress"]["samples"]]
        windows[0][0]["runs"].append(late)
        self.assertAlmostEqual(progress_figures(SPEC, windows, 2)["samples"][0], 200.0, delta=1.0)

    def test_no_common_window_says_how_much_more_work(self):
        with self.assertRaises(FigureError) as caught:
            progress_figures(SPEC, time_sliced(2, 1.5, 50.0), 2)
        message = str(caught.exception)
        self.assertIn("no common window: copy 0 printed its last counter line at 0.50 s, before copy 1 printed its "
                      "first at 1.50 s", message)
        self.assertIn("the copies' first counter lines lie 1.50 s apart: give each run at least 4x the work", message)
        single = time_sliced(2, 1.5, 50.0)
        for run in single[0][0]["runs"]:
            run["progress"]["samples"] = run["progress"]["samples"][-1:]
        with self.assertRaisesRegex(FigureError, "each copy printed one counter line: .* print the counter more"):
            progress_figures(SPEC, single, 2)


class InTheSweep(AppTestCase):
    def test_the_configuration_fails_with_one_line_and_exit_status_1(self):
        r = self.sweep(self.cpu_args(f"{sys.executable} {FAKE_SHARED} --stagger 0.6 --work 100", "--app-progress",
                                     SPEC.regex, "--app-metric-unit", "steps/s", "--repetitions", "1", "--no-warmup",
                                     ranks="2", min_time=None))
        self.assertEqual(r.returncode, 1, r.stderr)
        rec = self.results()[("timeslice", 2)]
        self.assertEqual((rec["status"], rec["aggregate"]), ("failed", None))
        self.assertIn("the copies counted together for", rec["error"])
        self.assertIn("x the work", rec["error"])
        self.assertNotIn("\n", rec["error"])
        self.assert_clean()


if __name__ == "__main__":
    unittest.main()
