"""A farmed application's energy per unit of work (core/mpsbench_core/app_energy.py): the counter's work over a
span, J per unit, and when a span's figure cannot be given."""
import unittest

import corecase  # noqa: F401  (puts core on the path)
from mpsbench_core.app_energy import (SPAN_TOLERANCE_S, counter_at, counter_work, no_span, per_unit, span_end,
                                      span_problem)

# A counter printed at 1 s (0), 2 s (100) and 4 s (300): 100 per second from 1 s to 2 s, then 100 per second.
LINES = [[1.0, 0.0], [2.0, 100.0], [4.0, 300.0]]


class CounterWork(unittest.TestCase):
    def test_linear_between_lines_and_nothing_counted_outside_them(self):
        self.assertEqual([counter_at(LINES, t) for t in (0.0, 1.0, 1.5, 3.0, 4.0, 9.0)],
                         [0.0, 0.0, 50.0, 200.0, 300.0, 300.0])
        self.assertEqual(counter_work(LINES, 1.5, 3.0), 150.0)
        # A span that runs on after the last line (the run's teardown) counts no more units.
        self.assertEqual(counter_work(LINES, 3.0, 6.0), 100.0)

    def test_joules_per_unit_is_the_spans_energy_over_the_units_done_in_it(self):
        # Two copies metered from 2 s to 4 s at 500 W: 1000 J; each did 200 units in it.
        self.assertEqual(per_unit(1000.0, 2 * counter_work(LINES, 2.0, 4.0)), 2.5)
        self.assertIsNone(per_unit(1000.0, 0.0))
        self.assertIsNone(per_unit(None, 10.0))
        self.assertIsNone(per_unit(float("nan"), 10.0))


class Span(unittest.TestCase):
    def test_the_span_ends_at_the_earliest_last_counter_line_before_the_first_run_ended(self):
        other = [[1.5, 0.0], [3.0, 10.0], [4.5, 20.0], [8.0, 40.0]]
        # LINES' run ended at 6 s (2 s of teardown after its last line at 4 s); the other copy printed at
        # 4.5 s and goes on: the span ends at 4 s, not at 6 s.
        self.assertEqual(span_end([LINES, other], 6.0), 4.0)
        # The other copy's lines after the first run's end do not count: it last printed at 3 s before 3.5 s.
        self.assertEqual(span_end([LINES, other], 3.5), 2.0)
        self.assertIsNone(span_end([LINES, [[7.0, 0.0]]], 6.0))  # a copy with no line by then
        self.assertIsNone(no_span(1.5, 4.0))
        self.assertIn("never all counting at once", no_span(4.0, 4.0))
        self.assertIn("never all counting at once", no_span(1.0, None))


class WhenNotGiven(unittest.TestCase):
    def test_a_meter_span_that_is_not_the_counters_stretch(self):
        self.assertIsNone(span_problem(2.0 + SPAN_TOLERANCE_S / 2, 1.0, 3.0))
        self.assertIn("is not the copies' common stretch (2.000 s", span_problem(3.0, 1.0, 3.0))
        self.assertIn("to the earliest last one", span_problem(3.0, 1.0, 3.0))
        self.assertEqual(span_problem(None, 1.0, 3.0), "mpsbench-meter gave no span")


if __name__ == "__main__":
    unittest.main()
