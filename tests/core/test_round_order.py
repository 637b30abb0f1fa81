"""mpsbench_core.round_order: the order of the modes in each round of a sweep, and what the record says of it."""
import os
import sys
import unittest

sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))), "core"))
from mpsbench_core.round_order import mode_order, orders  # noqa: E402
from mpsbench_core.sweep_settings import SweepRecord  # noqa: E402

THREE = ("timeslice", "mps", "streams")


class ModeOrder(unittest.TestCase):
    def test_the_documented_rounds_of_three_modes(self):
        self.assertEqual([mode_order(THREE, r) for r in range(6)], [
            ("timeslice", "mps", "streams"), ("streams", "mps", "timeslice"),
            ("mps", "streams", "timeslice"), ("timeslice", "streams", "mps"),
            ("streams", "timeslice", "mps"), ("mps", "timeslice", "streams")])
        self.assertEqual(mode_order(THREE, 6), mode_order(THREE, 0), "the rotation comes round again")

    def test_each_pair_of_rounds_gives_every_mode_the_same_mean_place(self):
        # Against a drift linear in time, a mode's mean place in the run order is what matters.
        for n in range(1, 7):
            modes = [f"m{i}" for i in range(n)]
            for pair in range(n + 1):
                places = {m: 0 for m in modes}
                for r in (2 * pair, 2 * pair + 1):
                    order = mode_order(modes, r)
                    self.assertEqual(sorted(order), sorted(modes), "every mode once per round")
                    for place, m in enumerate(order):
                        places[m] += place
                self.assertEqual(set(places.values()), {n - 1}, (n, pair, places))

    def test_every_mode_leads_a_round_once_per_rotation(self):
        modes = ("timeslice", "mps", "mps-qos", "streams")
        self.assertEqual({mode_order(modes, 2 * j)[0] for j in range(len(modes))}, set(modes))

    def test_edges(self):
        self.assertEqual(mode_order([], 3), ())
        self.assertEqual(mode_order(["mps"], 5), ("mps",))
        self.assertEqual(mode_order(["a", "b"], 1), ("b", "a"))
        with self.assertRaises(ValueError):
            mode_order(THREE, -1)
        self.assertEqual(orders(THREE, 2), [["timeslice", "mps", "streams"], ["streams", "mps", "timeslice"]])


class RecordedRounds(unittest.TestCase):
    def record(self, rounds):
        return SweepRecord(argv=("mpsbench-sweep",), modes=THREE, ranks_per_gpu=(1, 2), qos_percentages=None,
                           nodes=1, gpus_per_node=1, gpus_per_node_source="--gpus-per-node", launcher="mpirun",
                           mpsbench="mpsbench", mpsbench_options=(), mps_control=None, mps_client_limit=48,
                           rounds=rounds)

    def test_written_as_the_schema_names_it_with_the_orders_and_read_back(self):
        out = self.record(3).to_json()
        self.assertEqual(out["rounds"], {"count": 3, "orders": [list(mode_order(THREE, r)) for r in range(3)]})
        self.assertEqual(SweepRecord.from_json(out).rounds, 3)
        self.assertEqual(SweepRecord.from_json(out), self.record(3))

    def test_older_or_edited_files_read_as_one_round(self):
        for sweep in ({}, {"rounds": 2}, {"rounds": {"count": 0}}, {"rounds": {"count": True}},
                      {"rounds": {"count": "2"}}, {"rounds": None}):
            self.assertEqual(SweepRecord.from_json(sweep).rounds, 1, sweep)


if __name__ == "__main__":
    unittest.main()
