"""A configuration over its rounds (core/mpsbench_core/rounds.py) and the A/A row (aa_check.py)."""
import math
import unittest

from corecase import kernel, rounds_of
from mpsbench_core.aa_check import aa_check
from mpsbench_core.agreement import agreement, pooled
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


class JointVerdict(unittest.TestCase):
    def test_each_run_is_one_round_whose_figure_and_noise_are_the_runs(self):
        one = rounds_of("mps", 64, 2, [10.0, 40.0], noise=0.02) + rounds_of("timeslice", 64, 2, [5.0, 5.0], noise=0.02)
        two = rounds_of("mps", 64, 2, [30.0, 30.0], noise=0.04) + rounds_of("timeslice", 64, 2, [6.0, 6.0], noise=0.04)
        found = configs(pooled([one, two]))
        mps = next(c for c in found if c.first.mode == "mps")
        self.assertEqual((len(found), mps.rounds), (2, (0, 1)))  # one record per run and configuration
        self.assertAlmostEqual(mps.by_round()[0], 20.0)  # run 1's figure: the geometric mean of 10 and 40
        self.assertAlmostEqual(mps.by_round()[1], 30.0)
        # each round's noise is its run's figure's (0.02 / sqrt 2), not one repetition round's
        self.assertAlmostEqual(mps.records[0].raw["noise"]["relative"], 0.02 / math.sqrt(2))

    def test_runs_that_contradict_each_other_cannot_tell_together(self):
        def run(gain):  # one subject at two sizes; MPS at 512 k=2 pays off (2x) in one run, not (1x) in the other
            return (rounds_of("timeslice", 512, 1, [10.0, 10.1]) + rounds_of("mps", 512, 1, [10.0, 10.1])
                    + rounds_of("timeslice", 512, 2, [10.0, 10.1]) + rounds_of("mps", 512, 2, [10 * gain, 10.1 * gain])
                    + rounds_of("timeslice", 4096, 1, [5.0, 5.05]) + rounds_of("mps", 4096, 1, [5.0, 5.05]))
        a = agreement([run(2.0), run(1.0)], 1.1)
        self.assertEqual([c.at for c in a.contradictions], [512])
        [joint] = a.joint
        self.assertEqual([p.verdict(1.1) for p in joint.points if p.at == 512], ["cannot tell"])


class AAChecks(unittest.TestCase):
    def cell(self, size, gains, kernel_name="matmul", streams=None):
        """Timeslice at 10 per round and mps at 10 x gains; streams at 10 x `streams` where given."""
        rs = (rounds_of("timeslice", size, 1, [10.0] * len(gains), kernel=kernel_name, noise=0.002)
              + rounds_of("mps", size, 1, [10.0 * g for g in gains], kernel=kernel_name, noise=0.002))
        if streams is not None:
            rs += rounds_of("streams", size, 1, [10.0 * g for g in streams], kernel=kernel_name, noise=0.002)
        return rs

    def test_gains_near_one_pass(self):
        rs = self.cell(512, [1.01, 0.99]) + self.cell(1024, [1.0, 1.005]) + self.cell(2048, [0.995, 1.0])
        aa = aa_check(rs + rounds_of("mps", 512, 2, [20.0, 20.0]))  # k=2 is no A/A cell
        self.assertEqual((len(aa.cells), aa.near, len(aa.far), len(aa.excluding), aa.flagged), (3, 3, 0, 0, False))
        self.assertIn("3 of 3 gains within 3% of 1.0, beyond 10%: none; 0 of 3 intervals exclude 1.0", aa.line)
        self.assertIsNone(aa.plain)  # no streams at k=1: no plain A/A
        self.assertNotIn("plain A/A", aa.line)

    def test_gains_far_from_one_in_agreeing_rounds_flag_the_run(self):
        rs = (self.cell(512, [0.6, 0.61]) + self.cell(1024, [1.3, 1.31]) + self.cell(2048, [1.0, 1.0])
              + self.cell(64, [1.0, 1.0], kernel_name="nbody"))
        aa = aa_check(rs)
        self.assertEqual((aa.near, [c.name for c in aa.far]), (2, ["matmul fp32 512", "matmul fp32 1024"]))
        self.assertEqual(len(aa.excluding), 2)
        self.assertTrue(aa.flagged)
        self.assertIn("FLAGGED", aa.line)
        self.assertAlmostEqual(aa.far[0].interval.point, math.sqrt(0.6 * 0.61))

    def test_a_plain_aa_within_the_noise_puts_the_misses_on_mps(self):
        # MPS 5 % slower at two small cells in both rounds; streams, the same plain process as timeslice, is not
        rs = (self.cell(512, [0.95, 0.951], streams=[1.0, 1.001]) + self.cell(1024, [0.95, 0.952], streams=[1.001, 1.0])
              + self.cell(2048, [1.0, 1.0], streams=[1.0, 1.0]))
        aa = aa_check(rs)
        self.assertEqual((len(aa.excluding), aa.flagged), (2, True))
        self.assertEqual((aa.plain.mode, len(aa.plain.cells), aa.plain.near, len(aa.plain.excluding)),
                         ("streams", 3, 3, 0))
        self.assertIn("; plain A/A (streams against timeslice: the same plain process, no MPS): 3 of 3 gains within "
                      "3% of 1.0", aa.line)
        self.assertTrue(aa.line.endswith("FLAGGED: MPS costs a single process this much at those cells, not noise: "
                                         "the plain A/A is within the noise"), aa.line)

    def test_a_plain_aa_that_misses_too_says_the_machine_was_noisy(self):
        rs = (self.cell(512, [0.95, 0.951], streams=[1.06, 1.061]) + self.cell(1024, [0.95, 0.952], streams=[0.9, 0.9])
              + self.cell(2048, [1.0, 1.0], streams=[1.0, 1.0]))
        aa = aa_check(rs)
        self.assertTrue(aa.plain.flagged)
        self.assertIn("FLAGGED: the machine was too noisy to trust small gains in this run: the plain A/A", aa.line)
        # flagged by the plain A/A alone: MPS's own row is within the noise, the machine is still not to be trusted
        calm = aa_check(self.cell(512, [1.0, 1.0], streams=[1.06, 1.061])
                        + self.cell(1024, [1.0, 1.0], streams=[0.9, 0.9]))
        self.assertEqual((calm.flagged, calm.plain.flagged), (False, True))
        self.assertIn("FLAGGED: the machine was too noisy", calm.line)

    def test_no_cell_no_line(self):
        self.assertEqual(aa_check(rounds_of("mps", 64, 2, [1.0])).line, "")


if __name__ == "__main__":
    unittest.main()
