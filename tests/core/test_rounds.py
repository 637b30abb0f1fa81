"""A configuration over its rounds (core/mpsbench_core/rounds.py) and the A/A row (aa_check.py)."""
import math
import unittest

from corecase import kernel, rounds_of
from mpsbench_core.aa_check import aa_check
from mpsbench_core.rounds import Rounds, combined, configs


class Configurations(unittest.TestCase):
    def test_rounds_are_one_configuration_whose_figure_is_their_geometric_mean(self):
        found = configs(rounds_of("mps", 64, 2, [10.0, 40.0]) + rounds_of("timeslice", 64, 2, [5.0, 5.0]))
        self.assertEqual(len(found), 2)
        mps = found[0]
        self.assertEqual(mps.rounds, (0, 1))
        self.assertAlmostEqual(mps.figure, 20.0)
        self.assertEqual(Rounds.of(found).text, "2 rounds")
        [one, _] = combined(found)
        self.assertAlmostEqual(one.median, 20.0)
        self.assertEqual(one.raw["round"], 0)  # 10 and 40 are as near 20 (on a log scale): the first

    def test_records_without_a_round_are_round_zero_and_a_repeat_of_a_round_is_left_out(self):
        found = configs([kernel("mps", 64, 2, 10.0), kernel("mps", 64, 2, 99.0, round=0)])
        self.assertEqual((len(found[0].records), found[0].figure), (1, 10.0))
        self.assertEqual(Rounds.of(found).text, "one round")

    def test_a_failed_round_is_left_out_and_the_configuration_is_not_verified(self):
        [c] = configs(rounds_of("mps", 64, 2, [10.0]) + [kernel("mps", 64, 2, 0, status="failed", round=1)])
        self.assertEqual((c.figure, c.left_out, c.verified), (10.0, 1, False))
        [one] = combined([c])
        self.assertFalse(one.verified)


class AAChecks(unittest.TestCase):
    def cell(self, size, gains, kernel_name="matmul"):
        return (rounds_of("timeslice", size, 1, [10.0] * len(gains), kernel=kernel_name, noise=0.002)
                + rounds_of("mps", size, 1, [10.0 * g for g in gains], kernel=kernel_name, noise=0.002))

    def test_gains_near_one_pass(self):
        rs = self.cell(512, [1.01, 0.99]) + self.cell(1024, [1.0, 1.005]) + self.cell(2048, [0.995, 1.0])
        aa = aa_check(rs + rounds_of("mps", 512, 2, [20.0, 20.0]))  # k=2 is no A/A cell
        self.assertEqual((len(aa.cells), aa.near, len(aa.far), len(aa.excluding), aa.flagged), (3, 3, 0, 0, False))
        self.assertIn("3 of 3 gains within 3% of 1.0, beyond 10%: none; 0 of 3 intervals exclude 1.0", aa.line)

    def test_gains_far_from_one_in_agreeing_rounds_flag_the_run(self):
        rs = (self.cell(512, [0.6, 0.61]) + self.cell(1024, [1.3, 1.31]) + self.cell(2048, [1.0, 1.0])
              + self.cell(64, [1.0, 1.0], kernel_name="nbody"))
        aa = aa_check(rs)
        self.assertEqual((aa.near, [c.name for c in aa.far]), (2, ["matmul fp32 512", "matmul fp32 1024"]))
        self.assertEqual(len(aa.excluding), 2)
        self.assertTrue(aa.flagged)
        self.assertIn("FLAGGED", aa.line)
        self.assertAlmostEqual(aa.far[0].interval.point, math.sqrt(0.6 * 0.61))

    def test_no_cell_no_line(self):
        self.assertEqual(aa_check(rounds_of("mps", 64, 2, [1.0])).line, "")


if __name__ == "__main__":
    unittest.main()
