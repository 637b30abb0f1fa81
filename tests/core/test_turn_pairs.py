"""Gains paired by repetition where the modes took turns (core/mpsbench_core/turn_pairs.py, through rounds.py):
each round's log gain is the median of the per-repetition log ratios of two records of one turn group, not the
log ratio of their medians, and only where the repetitions are known to line up."""
import math
import random
import unittest

from corecase import kernel
from mpsbench_core import agreement, intervals, rounds, stats
from mpsbench_core.records import Result

GAIN = 1 / 1.02
# One round's repetitions as the host's drift moves them (0.7..1.3, not in order): both modes see the same drift,
# and mps is 1 / 1.02 of timeslice at every repetition but two, where timeslice alone was hit (1.15x, 0.9x). The
# hit at repetition 0 moves timeslice's median to another value than mps's, so the ratio of the two medians
# (1 / 1.173) is far from the gain that three of the five repetitions show.
BASE = [1.0, 1.3, 0.7, 1.2, 0.8]
HIT = [1.15, 1.0, 1.0, 1.0, 0.9]
MPS = [10.0 * x for x in BASE]
TIMESLICE = [10.0 * x * 1.02 * h for x, h in zip(BASE, HIT)]


def record(mode, samples, round=0, group=0, **fields):
    """A kernel record of matmul fp32 64 at k=1 with ``samples`` as its repetitions (median and noise.relative
    from them, as mpsbench writes them) and ``turn_group`` ``group`` (absent when None)."""
    raw = dict(kernel(mode, 64, 1, stats.median(samples), round=round, noise=stats.relative_noise(samples)).raw)
    raw["aggregate"] = {"flop_per_s": {"median": stats.median(samples), "min": min(samples), "max": max(samples),
                                       "samples": list(samples)}}
    if group is not None:
        raw["turn_group"] = group
    raw.update(fields)
    return Result.from_json(raw)


def pair(mps, timeslice):
    """(mps, timeslice) as rounds.Config, from records in that order."""
    found = {c.first.mode: c for c in rounds.configs(list(mps) + list(timeslice))}
    return found["mps"], found["timeslice"]


def by_round_medians(m, t):
    """log(mps median / timeslice median) per round: what the gain is where the records are not paired."""
    return [math.log(a.median / b.median) for a, b in zip(m.usable, t.usable)]


class PairedByRepetition(unittest.TestCase):
    def test_the_median_of_the_repetitions_log_ratios_not_the_ratio_of_the_medians(self):
        m, t = pair([record("mps", MPS)], [record("timeslice", TIMESLICE)])
        [d] = rounds.paired(m, t)
        self.assertAlmostEqual(d, math.log(GAIN), delta=1e-12)
        [unpaired] = by_round_medians(m, t)
        self.assertGreater(abs(unpaired - math.log(GAIN)), 0.1, "the samples must tell the two apart")

    def test_the_same_repetitions_are_not_paired_unless_they_are_known_to_line_up(self):
        # Each case breaks one condition of turn_pairs.aligned; the gain falls back to the ratio of the medians.
        slowed = {"cpu": {"discarded_repetitions": 1}}
        throttled = {"clocks": {"discarded_repetitions": 2}}
        cases = {
            "no turn group on one side": (record("mps", MPS), record("timeslice", TIMESLICE, group=None)),
            "different turn groups": (record("mps", MPS, group=0), record("timeslice", TIMESLICE, group=1)),
            # one group holds every configuration of the round: two of them ran their repetitions apart
            "another ranks per GPU": (record("mps", MPS, ranks_per_gpu=2), record("timeslice", TIMESLICE)),
            "another size": (record("mps", MPS, size=128), record("timeslice", TIMESLICE)),
            "different sample counts": (record("mps", MPS), record("timeslice", TIMESLICE[:4])),
            "a CPU-slowed repetition retaken": (record("mps", MPS, **slowed), record("timeslice", TIMESLICE)),
            "a throttled repetition retaken": (record("mps", MPS), record("timeslice", TIMESLICE, **throttled)),
            "a bool for a turn group": (record("mps", MPS, group=True), record("timeslice", TIMESLICE, group=True)),
            "a negative turn group": (record("mps", MPS, group=-1), record("timeslice", TIMESLICE, group=-1)),
        }
        for why, (a, b) in cases.items():
            with self.subTest(why):
                m, t = pair([a], [b])
                self.assertEqual(rounds.paired(m, t), [math.log(a.median / b.median)])
                self.assertFalse(rounds.by_repetition(m, t))
                interval = rounds.ratio(m, t, None)
                self.assertEqual(interval.pairing, "round")
                self.assertNotIn("pairing", interval.to_json())
                self.assertEqual(rounds.within(m, t), intervals.within_se([m.noise, t.noise]))

    def test_a_zero_discard_count_still_pairs(self):
        # mpsbench writes discarded_repetitions 0 where it dropped nothing: that is no retaken repetition
        nothing = {"cpu": {"discarded_repetitions": 0}, "clocks": {"discarded_repetitions": 0}}
        m, t = pair([record("mps", MPS, **nothing)], [record("timeslice", TIMESLICE, **nothing)])
        self.assertAlmostEqual(rounds.paired(m, t)[0], math.log(GAIN), delta=1e-12)


class IntervalSaysHowItWasPaired(unittest.TestCase):
    def rounds_of(self, groups):
        """Two rounds of mps and timeslice; round r's records in turn group groups[r] (None: none)."""
        mps = [record("mps", MPS, round=r, group=g) for r, g in enumerate(groups)]
        timeslice = [record("timeslice", [x * (1 + r / 100) for x in TIMESLICE], round=r, group=g)
                     for r, g in enumerate(groups)]
        return pair(mps, timeslice)

    def test_every_round_paired_by_repetition(self):
        m, t = self.rounds_of([0, 1])
        self.assertTrue(rounds.by_repetition(m, t))
        interval = rounds.ratio(m, t, None)
        self.assertEqual(interval.pairing, "repetition")
        self.assertEqual(interval.to_json()["pairing"], "repetition")
        # its point is of the paired rounds: exp(mean of the rounds' median log ratios)
        self.assertAlmostEqual(math.log(interval.point), math.fsum(rounds.paired(m, t)) / 2, delta=1e-12)

    def test_one_round_of_two_paired_is_paired_by_round(self):
        # round 1 without a turn group: the interval cannot say that every round was paired by repetition
        m, t = self.rounds_of([0, None])
        self.assertFalse(rounds.by_repetition(m, t))
        d = rounds.paired(m, t)
        self.assertAlmostEqual(d[0], math.log(GAIN), delta=1e-12)  # each round still its own best estimate
        self.assertEqual(d[1], by_round_medians(m, t)[1])
        interval = rounds.ratio(m, t, None)
        self.assertEqual(interval.pairing, "round")
        self.assertNotIn("pairing", interval.to_json())

    def test_no_round_paired(self):
        interval = rounds.ratio(*self.rounds_of([None, None]), None)
        self.assertEqual(interval.pairing, "round")
        # a file written before turn groups re-derives to the very same entry as before: no new key
        self.assertNotIn("pairing", interval.to_json())


class WithinTheRounds(unittest.TestCase):
    """The floor of the interval from the repetitions inside the rounds (rounds.within)."""

    # Per-repetition log ratios that vary (unlike MPS / TIMESLICE, whose paired noise is nearly 0).
    JITTER = [[1.0, 1.01, 0.995, 1.02, 0.99, 1.005], [1.0, 0.98, 1.01, 1.0, 1.015, 0.99]]

    def records(self, paired):
        """Two rounds; paired: each round's records in a turn group of their own, else in none."""
        base = [1.0, 1.3, 0.7, 1.2, 0.8, 1.1]  # both modes' drift: it falls out of the paired floor
        mps = [record("mps", [10.0 * x * j for x, j in zip(base, jitter)], round=r,
                      group=r if paired else None)
               for r, jitter in enumerate(self.JITTER)]
        timeslice = [record("timeslice", [10.0 * x for x in base], round=r, group=r if paired else None)
                     for r in range(len(self.JITTER))]
        return pair(mps, timeslice)

    def test_paired_the_root_mean_square_of_the_rounds_paired_noises(self):
        m, t = self.records(paired=True)
        noises = []
        for a, b in zip(m.usable, t.usable):
            logs = [math.log(x / y) for x, y in zip(a.samples, b.samples)]
            noises.append(1.2533141373155003 * stats.stdev(logs) / math.sqrt(len(logs)))
        expected = math.sqrt((noises[0] ** 2 + noises[1] ** 2) / 2) / math.sqrt(2)
        self.assertAlmostEqual(rounds.within(m, t), expected, delta=1e-12)
        self.assertLess(rounds.within(m, t), intervals.within_se([m.noise, t.noise]) / 5, "the drift is out of it")
        self.assertEqual(rounds.ratio(m, t, None).within_se, rounds.within(m, t))

    def test_unpaired_the_two_sides_own_noises(self):
        m, t = self.records(paired=False)
        self.assertNotIn("turn_group", m.first.raw)
        self.assertGreater(m.noise, 0.01)  # the drift is in each side's own noise
        self.assertEqual(rounds.within(m, t), intervals.within_se([m.noise, t.noise]))


class SharedDrift(unittest.TestCase):
    """Two rounds of eight repetitions whose modes share a strong drift (10 %) and differ by nothing but 1 % of
    their own noise per repetition: the true gain is exactly 1.0."""

    def records(self, seed=35):
        rng = random.Random(seed)
        out = []
        for r in range(2):
            drift = [rng.gauss(1.0, 0.1) for _ in range(8)]
            for mode in ("mps", "timeslice"):
                out.append(record(mode, [5e12 * x * rng.gauss(1.0, 0.01) for x in drift], round=r, group=r))
        return out

    def test_the_paired_interval_holds_the_true_gain_and_is_narrower(self):
        paired_records = self.records()
        unpaired_records = [Result.from_json({k: v for k, v in r.raw.items() if k != "turn_group"})
                            for r in paired_records]
        [(key, paired)] = rounds.gain_intervals(paired_records).items()
        [(same_key, unpaired)] = rounds.gain_intervals(unpaired_records).items()
        self.assertEqual(key, same_key)
        self.assertEqual((paired.pairing, unpaired.pairing), ("repetition", "round"))
        self.assertLessEqual(paired.low, 1.0)
        self.assertGreaterEqual(paired.high, 1.0)
        self.assertLessEqual(unpaired.low, 1.0)  # not wrong unpaired, only wider: the drift is in its floor
        self.assertGreaterEqual(unpaired.high, 1.0)
        self.assertLess(math.log(paired.high / paired.low), 0.5 * math.log(unpaired.high / unpaired.low),
                        (paired, unpaired))


class JointVerdictIsNotPaired(unittest.TestCase):
    def test_pooled_runs_carry_no_turn_group(self):
        # agreement.pooled makes each run one round whose record is a representative round's with the run's
        # figure: its samples are that one round's, so pairing them would not be the figures' ratio
        def run(hit):
            return [record("mps", MPS, round=r, group=r) for r in range(2)] + [
                record("timeslice", [x * (hit if r else 1.0) for x in TIMESLICE], round=r, group=r) for r in range(2)]
        runs = [run(1.0), run(1.1)]
        out = agreement.pooled(runs)
        self.assertEqual(len(out), 4)
        for r in out:
            self.assertNotIn("turn_group", r.raw)
        m, t = pair([r for r in out if r.mode == "mps"], [r for r in out if r.mode == "timeslice"])
        figures = [pair(*[[x for x in one if x.mode == mode] for mode in ("mps", "timeslice")]) for one in runs]
        self.assertEqual(rounds.paired(m, t), [math.log(a.figure / b.figure) for a, b in figures])
        self.assertEqual(rounds.ratio(m, t, None).pairing, "round")


if __name__ == "__main__":
    unittest.main()
