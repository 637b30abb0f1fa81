"""Which test of several runs right intervals pass (core agreement.py, intervals.consistent).

Runs simulated from the interval's own model (each configuration's per-round log gain normal around the same
true gain, one spread for the whole subject, two rounds, twelve configurations a subject), so every interval
here is as right as the rule can make it. Then a run's point lies inside every other run's interval far less
often than 95 % (the point is as noisy as the interval it is held against): 84 % with three runs, 72 % with
five, and each against each other run's interval 91 %; while two runs' gains are consistent (differ by no
more than both intervals allow) 95 % of the time or more. That is why agree decides on consistent pairs and only counts the points inside.
"""
import math
import random
import unittest

import corecase  # noqa: F401  (puts core on the path)
from mpsbench_core.agreement import AGREE_SHARE, Agreement, GainCell
from mpsbench_core.intervals import Interval, Pool, consistent, ratio_interval

CELLS, SPREAD = 12, 0.02


def simulated_run(rng: random.Random) -> list:
    """One run's gain intervals: CELLS configurations of true gain 1, two rounds each, spread SPREAD."""
    d = [[rng.gauss(0.0, SPREAD) for _ in range(2)] for _ in range(CELLS)]
    pool = Pool.of(d)
    return [ratio_interval(x, pool, 0.0) for x in d]


def rates(runs: int, trials: int = 300, seed: int = 7) -> tuple[float, float]:
    """(share of points inside every other run's interval, share of consistent pairs, share of points inside
    another run's interval, each against each) over the trials."""
    rng = random.Random(seed)
    inside = points = ok = pairs = each = ordered = 0
    for _ in range(trials):
        found = [simulated_run(rng) for _ in range(runs)]
        cells = [GainCell(("k", c, 1), tuple(run[c] for run in found)) for c in range(CELLS)]
        a = Agreement(runs, tuple(cells), (), 0, ())
        inside, points = inside + a.inside[0], points + a.inside[1]
        ok, pairs = ok + a.consistent[0], pairs + a.consistent[1]
        each, ordered = each + a.inside_pairs[0], ordered + a.inside_pairs[1]
    return inside / points, ok / pairs, each / ordered


def interval(point: float, se: float, df: float = 5.0):
    """A 95 % interval of ``point`` with standard error ``se`` (log scale) at ``df`` (t = 2.571 at 5)."""
    t = 2.571
    return Interval(point, point * math.exp(-t * se), point * math.exp(t * se), 2, "rounds", df, t, se, None, None,
                    4, 0.0)


class RightIntervals(unittest.TestCase):
    def test_three_runs_points_inside_84_percent_pairs_consistent_95_or_more(self):
        inside, ok, each = rates(3)
        self.assertTrue(0.80 <= inside <= 0.88, inside)  # under AGREE_SHARE: the stricter test fails right runs
        self.assertLess(inside, AGREE_SHARE)
        self.assertGreaterEqual(ok, 0.95)
        self.assertTrue(0.88 <= each <= 0.94, each)  # each against each: about 91 %, whatever the runs

    def test_five_runs_points_inside_even_less(self):
        inside, ok, each = rates(5, trials=150)
        self.assertTrue(0.66 <= inside <= 0.78, inside)
        self.assertGreaterEqual(ok, 0.95)
        self.assertTrue(0.88 <= each <= 0.94, each)


class ConsistentPairs(unittest.TestCase):
    def test_outside_each_others_interval_yet_consistent(self):
        a, b = interval(1.00, 0.015), interval(1.045, 0.015)  # 1.045 lies above a's 0.962-1.039
        self.assertFalse(a.contains(b.point))
        self.assertTrue(consistent(a, b))  # |log 1.045| = 0.044 <= 2.571 x 0.0212 = 0.055

    def test_further_apart_than_both_allow(self):
        self.assertFalse(consistent(interval(1.00, 0.015), interval(1.07, 0.015)))  # 0.068 > 0.055

    def test_the_fewer_degrees_of_freedom_decide(self):
        # at 2 degrees of freedom t is 4.303: 0.068 <= 4.303 x 0.0212
        self.assertTrue(consistent(interval(1.00, 0.015), interval(1.07, 0.015, df=2.0)))


class AgreeDecidesOnPairs(unittest.TestCase):
    def agreement(self, points):
        cells = tuple(GainCell(("k", c, 1), tuple(interval(p, 0.015) for p in row)) for c, row in enumerate(points))
        return Agreement(len(points[0]), cells, (), 0, ())

    def test_points_outside_but_pairs_consistent_agree(self):
        a = self.agreement([(1.0, 1.045)] * 3 + [(1.0, 1.0)] * 7)
        self.assertEqual(a.inside, (14, 20))  # 70 % inside: the stricter test would say no
        self.assertEqual(a.consistent, (10, 10))
        self.assertTrue(a.agree)

    def test_each_against_each_counts_every_ordered_pair_on_its_own(self):
        # run 2's 1.045 lies outside both others' intervals; runs 1 and 3 hold each other's point
        a = self.agreement([(1.0, 1.045, 1.0)])
        self.assertEqual(a.inside, (0, 3))  # no point inside every other interval
        self.assertEqual(a.inside_pairs, (2, 6))
        self.assertEqual(a.consistent, (3, 3))

    def test_inconsistent_pairs_beyond_the_share_disagree(self):
        a = self.agreement([(1.0, 1.2)] * 2 + [(1.0, 1.0)] * 8)
        self.assertEqual(a.consistent, (8, 10))
        self.assertEqual([(c.key[1], i, j) for c, i, j in a.inconsistent()], [(0, 0, 1), (1, 0, 1)])
        self.assertFalse(a.agree)

    def test_a_contradiction_disagrees_whatever_the_pairs(self):
        a = self.agreement([(1.0, 1.0)] * 10)
        self.assertTrue(a.agree)
        self.assertFalse(Agreement(a.runs, a.cells, (object(),), 1, ()).agree)


if __name__ == "__main__":
    unittest.main()
