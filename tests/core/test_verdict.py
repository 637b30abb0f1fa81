"""The one verdict (core/mpsbench_core/verdict.py) on hand-made results whose answer is known."""
import unittest

from corecase import app, kernel
from mpsbench_core.verdict import (GAIN_THRESHOLD, AppVerdict, KernelVerdict, copies_crossover, size_crossover,
                                   verdict_lines, verdicts)


def series(gains_by_size, best_k=2, other_k=4):
    """At each size: at best_k mps = 10 * gain over timeslice 10; at other_k a lower mps with a higher gain."""
    out = []
    for size, gain in gains_by_size.items():
        out += [kernel("timeslice", size, best_k, 10.0), kernel("mps", size, best_k, 10.0 * gain),
                kernel("timeslice", size, other_k, 1.0), kernel("mps", size, other_k, 5.0)]
    return out


class Crossovers(unittest.TestCase):
    def test_size_outcomes(self):
        t = 1.1
        self.assertEqual(size_crossover([1, 2, 3], [1.5, 1.2, 1.1], t), (None, "every"))
        self.assertEqual(size_crossover([1, 2, 3], [1.5, 1.0, 1.2], t), (None, "largest"))
        self.assertEqual(size_crossover([1, 2, 3], [1.0, 1.05, 1.0], t), (1, "never"))
        self.assertEqual(size_crossover([1, 2, 3], [1.3, 1.0, 1.0], t), (2, "below"))
        with self.assertRaises(ValueError):
            size_crossover([], [], t)

    def test_copies_outcomes(self):
        t = 1.1
        self.assertEqual(copies_crossover([1, 2, 4], [1.2, 1.3, 2.0], t), (1, None, "every"))
        self.assertEqual(copies_crossover([1, 2, 4], [0.9, 1.3, 2.0], t), (2, 1, "from"))
        self.assertEqual(copies_crossover([1, 2, 4], [0.9, 1.0, 1.05], t), (None, 4, "never"))
        self.assertEqual(copies_crossover([1, 2, 4], [0.9, 1.3, 1.0], t), (None, 4, "largest"))


class KernelVerdicts(unittest.TestCase):
    def test_best_k_is_the_fastest_mps_not_the_largest_k(self):
        # The bug this definition ends: the largest k (4) has gain 5x, the fastest mps (k=2) 1.05x.
        [v] = verdicts(series({1024: 1.05, 2048: 1.05}))
        self.assertIsInstance(v, KernelVerdict)
        self.assertEqual([(p.at, p.k) for p in v.points], [(1024, 2), (2048, 2)])
        self.assertEqual(v.outcome, "never")
        self.assertEqual(v.line, "verdict: matmul fp32: MPS never pays off (gain < 1.1x at every size measured); "
                                 "best ranks/GPU and MPS gain by size: 1024 k=2 1.05x, 2048 k=2 1.05x")

    def test_outcome_sentences(self):
        [below] = verdicts(series({512: 1.5, 1024: 1.2, 2048: 1.0, 4096: 1.05}))
        self.assertEqual(below.crossover, 2048)
        self.assertIn("MPS pays off below size 2048 (gain < 1.1x from 2048 on)", below.line)
        [every] = verdicts(series({512: 1.5}))
        self.assertIn("MPS pays off at every size measured (512)", every.line)
        [largest] = verdicts(series({512: 1.5, 1024: 1.0, 2048: 1.2}))
        self.assertIn("MPS pays off at the largest size measured (gain < 1.1x only at 1024)", largest.line)

    def test_tie_takes_the_smaller_k_and_threshold_is_inclusive(self):
        rs = [kernel("timeslice", 64, 1, 10.0), kernel("mps", 64, 1, 11.0),
              kernel("timeslice", 64, 2, 5.0), kernel("mps", 64, 2, 11.0)]
        [v] = verdicts(rs)
        self.assertEqual((v.points[0].k, v.outcome), (1, "every"))
        self.assertEqual(GAIN_THRESHOLD, 1.1)
        [strict] = verdicts(rs, threshold=1.2)
        self.assertEqual(strict.outcome, "never")

    def test_failed_and_unverified_results_are_left_out_and_counted(self):
        rs = series({512: 1.5}) + [kernel("mps", 512, 8, 99.0, verified=False), kernel("timeslice", 512, 8, 1.0),
                                   kernel("mps", 1024, 2, 0, status="failed"), kernel("timeslice", 1024, 2, 9.0)]
        [v] = verdicts(rs)
        self.assertEqual([p.k for p in v.points], [2])  # the unverified 99 at k=8 is not the best
        self.assertEqual(v.left_out, 2)
        self.assertTrue(v.line.endswith("; 2 configuration(s) failed or unverified, left out"))

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
        self.assertEqual((v.best.mode, v.best.ranks_per_gpu, v.crossover, v.below, v.outcome), ("mps", 4, 2, 1, "from"))
        self.assertEqual(v.line, "verdict: md: best mps at 4 copies per GPU, 10,800 runs/hour (3.00x one copy alone; "
                                 "3.00x timeslice at 4 per GPU); MPS pays off from 2 copies per GPU on "
                                 "(gain < 1.1x at 1)")

    def test_a_failed_check_is_never_the_best(self):
        rs = [app("timeslice", 1, 1.0), app("mps", 4, 9.0, verified=False), app("mps", 2, 1.5)]
        [v] = verdicts(rs)
        self.assertEqual((v.best.ranks_per_gpu, v.failed), (2, 1))

    def test_version_2_and_3_records_give_the_same_verdict(self):
        v2 = [app("timeslice", 1, 1.0, version=2), app("mps", 2, 1.5, version=2)]
        v3 = [app("timeslice", 1, 1.0), app("mps", 2, 1.5)]
        self.assertEqual(verdict_lines(verdicts(v2)), verdict_lines(verdicts(v3)))

    def test_nothing_completed(self):
        [v] = verdicts([app("mps", 2, 0, status="failed")])
        self.assertEqual(v.line, "verdict: md: no configuration completed (1 failed)")

    def test_program_units_are_shown_as_such(self):
        [v] = verdicts([app("timeslice", 1, 4000.0, unit="ns/day"), app("mps", 2, 9000.0, unit="ns/day")])
        self.assertIn("best mps at 2 copies per GPU, 9,000 ns/day (2.25x one copy alone)", v.line)


if __name__ == "__main__":
    unittest.main()
