"""The interval rule (core/mpsbench_core/intervals.py) on synthetic rounds whose interval is known by hand."""
import math
import unittest

import corecase  # noqa: F401  (puts core on the path)
from mpsbench_core.intervals import (PRIOR_DF, Pool, difference_interval, family_coverage, ratio_interval, t_cdf,
                                    t_quantile, within_se)

G = 1.2
D = [math.log(G) + 0.01, math.log(G) - 0.01]  # two rounds, 1 % either side of 1.2


class TQuantile(unittest.TestCase):
    def test_table_interpolation_and_limits(self):
        self.assertAlmostEqual(t_quantile(1), 12.706)
        self.assertAlmostEqual(t_quantile(5), 2.571)
        self.assertAlmostEqual(t_quantile(30), 2.042)
        self.assertTrue(2.571 > t_quantile(5.5) > 2.447)
        self.assertAlmostEqual(t_quantile(120), 1.980, places=2)
        self.assertAlmostEqual(t_quantile(math.inf), 1.95996, places=4)
        with self.assertRaises(ValueError):
            t_quantile(0)


class OtherCoverages(unittest.TestCase):
    """The CI gate's intervals: a coverage that keeps hundreds of figures right together (family_coverage)."""

    def test_computed_quantiles_match_the_standard_tables(self):
        # t(0.995) and t(0.9995) from the standard tables, and the 95 % ones computed, to the table's digits.
        for df, t995, t9995 in ((1, 63.657, 636.62), (5, 4.032, 6.869), (10, 3.169, 4.587), (30, 2.750, 3.646)):
            self.assertAlmostEqual(t_quantile(df, 0.99), t995, places=2)
            self.assertAlmostEqual(t_quantile(df, 0.999), t9995, delta=0.01 * t9995)
            self.assertAlmostEqual(t_quantile(df, 0.95 + 1e-12), t_quantile(df), places=3)
        self.assertAlmostEqual(t_quantile(math.inf, 0.99), 2.5758, places=4)
        self.assertAlmostEqual(t_cdf(0.0, 3), 0.5)
        self.assertAlmostEqual(t_cdf(-2.571, 5), 0.025, places=4)
        with self.assertRaises(ValueError):
            t_quantile(5, 1.0)

    def test_family_coverage_is_bonferronis(self):
        self.assertEqual(family_coverage(1), 0.95)
        self.assertAlmostEqual(family_coverage(500), 0.9999)
        self.assertEqual(family_coverage(0), 0.95)

    def test_a_family_of_identical_runs_passes_where_95_percent_each_fails(self):
        """500 unchanged figures, two rounds a side: at 95 % each some interval misses 1.0 almost surely; at the
        family's coverage hardly ever (simulated 200 times: at most 5 % of the families, as promised)."""
        import random
        rng = random.Random(37)
        def family(coverage):
            sides = [[[rng.gauss(0.0, 0.02) for _ in range(2)] for _ in range(2)] for _ in range(500)]
            pool = Pool.of(r for pair in sides for r in pair)
            return any(not difference_interval([math.exp(x) for x in a], [math.exp(x) for x in b], pool, pool,
                                               0.0, coverage).contains(1.0) for a, b in sides)
        self.assertEqual(sum(family(0.95) for _ in range(20)), 20)
        self.assertLessEqual(sum(family(family_coverage(500)) for _ in range(200)), 10)


class RatioIntervals(unittest.TestCase):
    def test_two_rounds_alone_use_t_with_one_degree_of_freedom(self):
        # own variance 2e-4 (sd 0.01414), SE sqrt(2e-4 / 2) = 0.01, t(1) = 12.706: 1.2 exp(+-0.12706)
        i = ratio_interval(D, None, 0.0)
        self.assertAlmostEqual(i.point, G)
        self.assertAlmostEqual(i.low, G * math.exp(-0.12706), places=4)
        self.assertAlmostEqual(i.high, G * math.exp(0.12706), places=4)
        self.assertEqual((i.rounds, i.df, i.basis, i.side(1.1)), (2, 1, "rounds", "straddles"))
        self.assertAlmostEqual(i.own_sd, math.sqrt(2e-4))

    def test_the_pool_moderates_the_variance_and_adds_its_degrees_of_freedom(self):
        # pool 3e-4 with 10 df, weighted PRIOR_DF = 4: (1.2e-3 + 2e-4) / 5 = 2.8e-4; df 5, t 2.571
        pool = Pool(3e-4, 10)
        self.assertEqual(pool.prior_df, PRIOR_DF)
        i = ratio_interval(D, pool, 0.0)
        half = 2.571 * math.sqrt(2.8e-4 / 2)
        self.assertAlmostEqual(i.low, G * math.exp(-half), places=6)
        self.assertAlmostEqual(i.high, G * math.exp(half), places=6)
        self.assertEqual((i.df, i.prior_df, i.side(1.1), i.side(1.3)), (5, 4, "above", "below"))
        self.assertEqual(i.text, f"{i.low:.2f}x-{i.high:.2f}x")

    def test_a_configuration_noisier_than_its_pool_keeps_its_own_variance(self):
        quiet = ratio_interval(D, Pool(1e-6, 10), 0.0)  # moderated (4e-6 + 2e-4) / 5 < own 2e-4: own wins
        self.assertAlmostEqual(quiet.high, G * math.exp(2.571 * math.sqrt(2e-4 / 2)), places=6)

    def test_the_repetitions_noise_is_a_floor(self):
        i = ratio_interval([math.log(G)] * 3, None, 0.02)  # rounds that agree exactly: the floor decides
        self.assertAlmostEqual(i.se, 0.02)
        self.assertAlmostEqual(i.high, G * math.exp(t_quantile(2) * 0.02))

    def test_one_round_says_so_and_uses_the_repetitions(self):
        i = ratio_interval([math.log(G)], Pool(1e-4, 10), 0.01)
        self.assertEqual(i.basis, "one round")
        self.assertAlmostEqual(i.high, G * math.exp(1.95996 * 0.01), places=5)
        with self.assertRaises(ValueError):
            ratio_interval([], None, 0.0)

    def test_pool_of_several_configurations(self):
        pool = Pool.of([[0.0, 0.02], [1.0, 1.0, 1.03], [5.0]])  # the single round adds nothing
        self.assertEqual(pool.df, 3)
        self.assertAlmostEqual(pool.variance, (2e-4 + (2 * 0.01 ** 2 + 0.02 ** 2)) / 3)
        self.assertIsNone(Pool.of([[1.0]]))

    def test_within_se_adds_the_sides(self):
        self.assertAlmostEqual(within_se([0.03, 0.04, None]), 0.05)


class DifferenceIntervals(unittest.TestCase):
    def test_two_runs_of_a_stable_configuration(self):
        base, new = [100.0, 100.2, 99.8], [90.0, 90.1, 89.9]  # a 10 % slowdown, 0.2 % spread
        i = difference_interval(new, base, None, None, 0.0)
        self.assertAlmostEqual(i.point, 0.9, places=3)
        self.assertLess(i.high, 1.0)
        self.assertEqual(i.df, 2)
        same = difference_interval([100.0, 104.0], [103.0, 98.0], None, None, 0.0)
        self.assertTrue(same.contains(1.0))


if __name__ == "__main__":
    unittest.main()


class Coverage(unittest.TestCase):
    @staticmethod
    def coverage(sds, runs=200, seed=35):
        """Simulated runs: one configuration per sd, two rounds each, the log gain of a round normal around
        the truth (1.0) with that sd; each interval pooled over the run's configurations. The share of
        intervals holding the truth, per sd."""
        import random
        rng = random.Random(seed)
        hits = {s: 0 for s in sds}
        for _ in range(runs):
            rounds = [[rng.gauss(0.0, s) for _ in range(2)] for s in sds]
            pool = Pool.of(rounds)
            for s, d in zip(sds, rounds):
                hits[s] += ratio_interval(d, pool, 0.0).contains(1.0)
        return {s: hits[s] / (runs * sds.count(s)) for s in hits}

    def test_equally_noisy_configurations_are_covered_at_least_95_percent_of_the_time(self):
        share = self.coverage([0.02] * 20)[0.02]
        self.assertGreater(share, 0.95)
        self.assertLess(share, 0.99)  # conservative, not useless

    def test_noisier_configurations_among_quiet_ones_are_still_mostly_covered(self):
        share = self.coverage([0.01] * 15 + [0.04] * 5)
        self.assertGreater(share[0.01], 0.97)
        self.assertGreater(share[0.04], 0.85)
