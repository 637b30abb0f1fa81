"""The one verdict (core/mpsbench_core/verdict.py) on hand-made results whose answer is known."""
import unittest

import math

from corecase import app, kernel, rounds_of
from mpsbench_core.verdict import GAIN_THRESHOLD, AppVerdict, KernelVerdict, verdict_lines, verdicts


def series(gains_by_size, best_k=2, other_k=4):
    """At each size: at best_k mps = 10 * gain over timeslice 10; at other_k a lower mps with a higher gain."""
    out = []
    for size, gain in gains_by_size.items():
        out += [kernel("timeslice", size, best_k, 10.0), kernel("mps", size, best_k, 10.0 * gain),
                kernel("timeslice", size, other_k, 1.0), kernel("mps", size, other_k, 5.0)]
    return out


class RoundsIntervalsAndClasses(unittest.TestCase):
    """Synthetic rounds with a known spread give the known interval and class."""

    def two_rounds(self, gains_by_size, spread):
        """At each size, k=2: timeslice 10 in both rounds, mps 10 * gain * (1 +- spread) in rounds 0 and 1."""
        out = []
        for size, gain in gains_by_size.items():
            out += rounds_of("timeslice", size, 2, [10.0, 10.0])
            out += rounds_of("mps", size, 2, [10.0 * gain * math.exp(spread), 10.0 * gain * math.exp(-spread)])
        return out

    def test_the_interval_of_each_gain_comes_from_the_rounds(self):
        [v] = verdicts(self.two_rounds({512: 1.5, 1024: 1.12, 2048: 0.9}, 0.01))
        # every configuration's round-to-round sd of the log gain is sqrt(2) * 0.01: the pool is the same, its
        # weight 3 (three configurations of 1 df each); df 3 + 1 = 4, t 2.776; SE sqrt(2e-4 / 2) = 0.01
        half = 2.776 * 0.01
        p = {q.at: q for q in v.points}
        self.assertAlmostEqual(p[512].interval.low, 1.5 * math.exp(-half), places=6)
        self.assertAlmostEqual(p[1024].interval.high, 1.12 * math.exp(half), places=6)
        self.assertEqual([q.verdict(1.1) for q in v.points], ["pays off", "cannot tell", "does not"])
        self.assertEqual((v.outcome, v.between, v.crossover), ("below", (512, 2048), 2048))
        self.assertIn("MPS pays off at 512 (gain above 1.1x); does not at 2048; cannot tell at 1024 "
                      f"({p[1024].interval.text}); the crossover lies between 512 and 2048", v.line)
        self.assertNotIn("one round", v.line)

    def test_rounds_that_disagree_cannot_tell(self):
        [v] = verdicts(self.two_rounds({512: 1.3}, 0.2))  # 1.3 x e^+-0.2 in the two rounds
        self.assertEqual((v.outcome, v.points[0].verdict(1.1)), ("unclear", "cannot tell"))
        self.assertIn("the data cannot tell whether MPS pays off at 512", v.line)

    def test_the_figure_is_the_geometric_mean_of_the_rounds(self):
        [v] = verdicts(self.two_rounds({512: 1.5}, 0.1))
        self.assertAlmostEqual(v.points[0].mps, 15.0)
        self.assertAlmostEqual(v.points[0].gain, 1.5)

    def test_best_ranks_is_the_fewest_within_noise_of_the_fastest(self):
        # k=2 and k=4 within 1 % of each other, the rounds 2 % either way: k=2; k=8 clearly faster: k=8
        rs = []
        for k, mps, j in ((2, 20.0, 1.02), (4, 20.2, 1 / 1.02)):
            rs += rounds_of("timeslice", 64, k, [10.0, 10.0]) + rounds_of("mps", 64, k, [mps * j, mps / j])
        [v] = verdicts(rs)
        self.assertEqual(v.points[0].k, 2)
        rs += rounds_of("timeslice", 64, 8, [10.0, 10.0]) + rounds_of("mps", 64, 8, [40.0, 40.2])
        [v] = verdicts(rs)
        self.assertEqual(v.points[0].k, 8)

    def test_the_gain_is_the_best_of_mps_against_the_best_of_timeslice(self):
        # matmul fp32 2048 on an H200 (2026-11-28): mps 50.3 at k=1 and 52.2 at k=2, within noise of each other;
        # timeslice 50.7 at k=1, 45.8 at k=2. mps / timeslice at the same k is 0.99x at k=1 and 1.14x at k=2, so
        # a verdict at "the fewest ranks within noise" said "does not" or "pays off" as the noise fell. Best
        # against best is 52.2 / 50.7 = 1.03x whichever k the noise picks: MPS does not pay off.
        for mps_k2 in ((52.2 * 1.03, 52.2 / 1.03), (52.2 * 1.001, 52.2 / 1.001)):
            rs = (rounds_of("mps", 2048, 1, [50.3, 50.3]) + rounds_of("mps", 2048, 2, list(mps_k2))
                  + rounds_of("timeslice", 2048, 1, [50.7, 50.7]) + rounds_of("timeslice", 2048, 2, [45.8, 45.8]))
            [v] = verdicts(rs)
            p = v.points[0]
            self.assertEqual((p.k_timeslice, v.outcome), (1, "never"))
            self.assertLess(p.interval.high, 1.1)
        self.assertIn("2048 k=2 vs timeslice k=1 1.03x", v.line)  # the rounds agree: k=2 is faster under mps

    def test_a_best_that_does_not_pay_off_against_a_fastest_that_does_cannot_tell(self):
        # matmul tf32 1024 on two H200s (2026-11-29): mps and timeslice at k=1 130-150 TFLOP/s but 0.82x and
        # 0.60x of mps k=2 in the two rounds, so k=1 is "within noise" of k=2 (189) and the best of each mode;
        # mps / timeslice at k=1 is 1.0 (one process either way), while mps k=2 is 1.33x timeslice k=2 (142).
        # The verdict read "does not pay off" on the k=1 pair; the data cannot tell which k is best.
        rs = (rounds_of("mps", 1024, 1, [155.0, 114.0]) + rounds_of("timeslice", 1024, 1, [155.0, 114.0])
              + rounds_of("mps", 1024, 2, [189.0, 190.0]) + rounds_of("timeslice", 1024, 2, [142.0, 142.5]))
        rs += self.two_rounds({4096: 0.95}, 0.01)  # a size whose best and fastest agree: "does not", as before
        [v] = verdicts(rs)
        p = {q.at: q for q in v.points}
        self.assertEqual((p[1024].k, p[1024].k_timeslice), (1, 1))
        self.assertEqual(p[1024].interval.side(1.1), "below")  # the best alone would say "does not"
        self.assertEqual(p[1024].fastest.side(1.1), "above")
        self.assertEqual(p[1024].k_fastest, (2, 2))
        self.assertEqual([q.verdict(1.1) for q in v.points], ["cannot tell", "does not"])
        self.assertIsNone(p[4096].fastest)
        low, high = p[1024].interval.low, p[1024].fastest.high
        self.assertIn(f"cannot tell at 1024 ({low:.2f}x-{high:.2f}x)", v.line)
        self.assertIn(f"1024 k=1 1.00x [{p[1024].interval.text}] (the fastest, k=2 vs timeslice k=2: "
                      f"{p[1024].fastest.point:.2f}x [{p[1024].fastest.text}])", v.line)

    def test_a_best_that_cannot_tell_keeps_its_answer_whatever_the_fastest(self):
        # only "pays off" against "does not" puts the best's answer in doubt; "cannot tell" already says so
        rs = (rounds_of("mps", 1024, 1, [150.0, 110.0]) + rounds_of("timeslice", 1024, 1, [140.0, 125.0])
              + rounds_of("mps", 1024, 2, [189.0, 190.0]) + rounds_of("timeslice", 1024, 2, [142.0, 142.5]))
        [v] = verdicts(rs)
        p = v.points[0]
        self.assertEqual((p.k, p.interval.side(1.1), p.fastest), (1, "straddles", None))
        self.assertEqual(p.verdict(1.1), "cannot tell")

    def test_a_failed_round_is_left_out_of_the_figure_and_counted(self):
        rs = self.two_rounds({512: 1.5}, 0.01) + [kernel("mps", 512, 2, 0, status="failed", round=2)]
        [v] = verdicts(rs)
        self.assertAlmostEqual(v.points[0].gain, 1.5)
        self.assertEqual(v.left_out, 1)
        self.assertTrue(v.line.endswith("; 1 round(s) failed or unverified, left out"))


class KernelVerdicts(unittest.TestCase):
    def test_best_k_is_the_fastest_mps_not_the_largest_k(self):
        # The bug this definition ends: the largest k (4) has gain 5x, the fastest mps (k=2) 1.05x.
        [v] = verdicts(series({1024: 1.05, 2048: 1.05}))
        self.assertIsInstance(v, KernelVerdict)
        self.assertEqual([(p.at, p.k) for p in v.points], [(1024, 2), (2048, 2)])
        self.assertEqual(v.outcome, "never")
        self.assertEqual(v.line, "verdict: matmul fp32: MPS does not pay off at any size measured (gain below 1.1x); "
                                 "best ranks/GPU and MPS gain [95% interval] by size: 1024 k=2 1.05x [1.05x-1.05x], "
                                 "2048 k=2 1.05x [1.05x-1.05x]; one round: the spread between processes was not "
                                 "measured (mpsbench-sweep --rounds 2 or more)")

    def test_outcome_sentences(self):
        [below] = verdicts(series({512: 1.5, 1024: 1.2, 2048: 1.0, 4096: 1.05}))
        self.assertEqual(below.crossover, 2048)
        self.assertIn("MPS pays off at 512 and 1024 (gain above 1.1x); does not at 2048 and 4096; the crossover lies "
                      "between 1024 and 2048", below.line)
        [every] = verdicts(series({512: 1.5}))
        self.assertIn("MPS pays off at every size measured (512; gain above 1.1x throughout)", every.line)
        [mixed] = verdicts(series({512: 1.5, 1024: 1.0, 2048: 1.2}))
        self.assertEqual((mixed.outcome, mixed.crossover), ("mixed", None))
        self.assertIn("MPS pays off at 512 and 2048 (gain above 1.1x); does not at 1024; best", mixed.line)

    def test_tie_takes_the_smaller_k_and_a_gain_at_the_threshold_cannot_tell(self):
        rs = [kernel("timeslice", 64, 1, 10.0), kernel("mps", 64, 1, 11.0),
              kernel("timeslice", 64, 2, 5.0), kernel("mps", 64, 2, 11.0)]
        [v] = verdicts(rs)
        self.assertEqual((v.points[0].k, v.outcome), (1, "unclear"))  # 1.1 against 1.1: the interval holds it
        self.assertEqual(GAIN_THRESHOLD, 1.1)
        [strict] = verdicts(rs, threshold=1.2)
        self.assertEqual(strict.outcome, "never")
        [loose] = verdicts(rs, threshold=1.05)
        self.assertEqual(loose.outcome, "every")

    def test_failed_and_unverified_results_are_left_out_and_counted(self):
        rs = series({512: 1.5}) + [kernel("mps", 512, 8, 99.0, verified=False), kernel("timeslice", 512, 8, 1.0),
                                   kernel("mps", 1024, 2, 0, status="failed"), kernel("timeslice", 1024, 2, 9.0)]
        [v] = verdicts(rs)
        self.assertEqual([p.k for p in v.points], [2])  # the unverified 99 at k=8 is not the best
        self.assertEqual(v.left_out, 2)
        self.assertTrue(v.line.endswith("; 2 round(s) failed or unverified, left out"))

    def test_a_kernel_without_both_modes_says_which_is_missing(self):
        rs = [kernel("streams", 64, 1, 1.0), kernel("mps", 64, 1, 1.0, kernel="nbody")]
        lines = verdict_lines(verdicts(rs))
        self.assertEqual(lines, [
            "verdict: matmul fp32: no MPS verdict: timeslice and mps not measured (measured: streams)",
            "verdict: nbody fp32: no MPS verdict: timeslice not measured (measured: mps)"])
        cpu = [kernel("streams", 64, 1, 1.0), kernel("streams", 64, 1, 1.0, kernel="nbody")]
        self.assertEqual(verdict_lines(verdicts(cpu)),
                         ["verdict: every kernel: no MPS verdict: timeslice and mps not measured (measured: streams)"])

    def test_params_and_precisions_are_subjects_of_their_own(self):
        rs = series({8: 2.0}) + [kernel(m, 8, 2, v, precision="tf32") for m, v in (("timeslice", 1.0), ("mps", 1.0))]
        rs += [kernel(m, 8, 1, v, kernel="inference", params={"layers": 4, "hidden": 64})
               for m, v in (("timeslice", 1.0), ("mps", 3.0))]
        subjects = [v.subject for v in verdicts(rs)]
        self.assertEqual(subjects, ["matmul fp32", "matmul tf32", "inference fp32 (hidden=64,layers=4)"])

    def test_mixes_get_no_size_verdict(self):
        mix = kernel("mps", 0, 8, 5.0, kernel="mix", precision="matmul/fp32/64:4,inference/fp16/8:4")
        [v] = verdicts([mix])  # judged per tenant (test_mix.py): no tenants here, no size series either
        self.assertEqual((v.points, v.line), ((), "verdict: mix matmul/fp32/64:4,inference/fp16/8:4: no mix verdict: "
                                                    "no mode measured the tenants"))


class AppVerdicts(unittest.TestCase):
    def test_best_configuration_gains_and_crossover(self):
        rs = [app("timeslice", 1, 1.0), app("timeslice", 2, 1.0), app("timeslice", 4, 1.0),
              app("mps", 1, 0.95), app("mps", 2, 1.8), app("mps", 4, 3.0)]
        [v] = verdicts(rs)
        self.assertIsInstance(v, AppVerdict)
        self.assertEqual((v.best.first.mode, v.best.first.ranks_per_gpu, v.crossover, v.below, v.outcome),
                         ("mps", 4, 2, 1, "from"))
        self.assertEqual(v.line, "verdict: md: best mps at 4 copies per GPU, 10,800 runs/hour (3.00x one copy alone; "
                                 "3.00x [3.00x-3.00x] timeslice at 4 per GPU); MPS pays off at 2 and 4 copies per GPU "
                                 "(gain above 1.1x); does not at 1 copy per GPU; the crossover lies between 1 and 2 "
                                 "copies per GPU; MPS gain [95% interval] by copies per GPU: 1 0.95x [0.95x-0.95x], 2 "
                                 "1.80x [1.80x-1.80x], 4 3.00x [3.00x-3.00x]; one round: the spread between processes "
                                 "was not measured (mpsbench-sweep --rounds 2 or more)")

    def test_the_best_is_the_fewest_copies_within_noise_and_timeslice_within_noise_is_said(self):
        rs = []
        for r, jitter in enumerate((1.03, 1 / 1.03)):
            rs += [app("timeslice", 1, 1.0, round=r), app("timeslice", 4, 2.0 * jitter, round=r),
                   app("mps", 1, 1.0, round=r), app("mps", 2, 2.0 * jitter, round=r), app("mps", 4, 2.02 / jitter, round=r)]
        [v] = verdicts(rs)
        self.assertEqual(v.best.first.ranks_per_gpu, 2)  # 2 copies are within noise of 4
        rs = [x for x in rs if not (x.mode == "mps" and x.ranks_per_gpu == 2)]
        [v] = verdicts(rs)
        self.assertEqual(v.best.first.ranks_per_gpu, 4)
        self.assertIn("timeslice at 4 per GPU: within noise of it", v.line)

    def test_a_failed_configuration_is_named_in_the_same_line(self):
        rs = [app("timeslice", 1, 1.0), app("timeslice", 2, 1.0), app("mps", 1, 1.0), app("mps", 2, 0, status="failed")]
        [v] = verdicts(rs)
        self.assertNotIn("every", v.line)
        self.assertTrue(v.line.endswith("; 1 configuration(s) failed: mps k=2 (failed)"), v.line)

    def test_a_failed_check_is_never_the_best(self):
        rs = [app("timeslice", 1, 1.0), app("mps", 4, 9.0, verified=False), app("mps", 2, 1.5)]
        [v] = verdicts(rs)
        self.assertEqual((v.best.first.ranks_per_gpu, v.failed), (2, ("mps k=4 (check failed)",)))

    def test_version_2_and_3_records_give_the_same_verdict(self):
        v2 = [app("timeslice", 1, 1.0, version=2), app("mps", 2, 1.5, version=2)]
        v3 = [app("timeslice", 1, 1.0), app("mps", 2, 1.5)]
        self.assertEqual(verdict_lines(verdicts(v2)), verdict_lines(verdicts(v3)))

    def test_nothing_completed(self):
        [v] = verdicts([app("mps", 2, 0, status="failed")])
        self.assertEqual(v.line, "verdict: md: no configuration completed; 1 configuration(s) failed: mps k=2 (failed)")

    def test_program_units_are_shown_as_such(self):
        [v] = verdicts([app("timeslice", 1, 4000.0, unit="ns/day"), app("mps", 2, 9000.0, unit="ns/day")])
        self.assertIn("best mps at 2 copies per GPU, 9,000 ns/day (2.25x one copy alone)", v.line)


if __name__ == "__main__":
    unittest.main()
