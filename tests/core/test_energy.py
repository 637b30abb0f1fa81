"""Energy per unit of work and GPU activity (core/mpsbench_core/energy.py), and the energy side of the verdicts."""
import unittest

from corecase import app, energy, kernel, with_raw
from mpsbench_core.energy import (Activity, Energy, energy_ratio, format_per_unit, per_unit_label, rate_unit,
                                  unit_word, work_unit)
from mpsbench_core.verdict import verdicts

TFLOP = 1e12


class Reading(unittest.TestCase):
    def test_available_energy(self):
        r = with_raw(kernel("mps", 64, 2, 10.0), energy=energy(0.5 / TFLOP, joules=120.0, span=2.0))
        e = r.energy
        self.assertEqual((e.available, e.joules, e.per_unit, e.unit, e.mean_power_w, e.span_s),
                         (True, 120.0, 0.5 / TFLOP, "FLOP", 60.0, 2.0))
        self.assertTrue(e.usable)
        self.assertEqual(format_per_unit(e.per_unit, e.unit), "0.500 J/TFLOP")

    def test_the_engines_unit_names_the_work(self):
        """mpsbench writes unit "J/interaction" (energy_record.cpp): the work is interactions, not FLOP."""
        e = energy(2.0, joules=120.0, span=2.0)
        e["unit"] = "J/interaction"
        r = with_raw(kernel("mps", 64, 2, 10.0), energy=e)
        self.assertEqual((r.energy.unit, format_per_unit(r.energy.per_unit, r.energy.unit)),
                         ("interaction", "2.00 J/interaction"))
        e["unit"] = "J/"  # no work named: the primary figure's
        self.assertEqual(with_raw(kernel("mps", 64, 2, 10.0), energy=e).energy.unit, "FLOP")

    def test_unavailable_has_its_reason_and_never_a_zero(self):
        r = with_raw(kernel("mps", 64, 2, 10.0), energy={"available": False, "reason": "the CPU device"})
        self.assertEqual((r.energy.available, r.energy.reason, r.energy.usable), (False, "the CPU device", False))
        zero = with_raw(kernel("mps", 64, 2, 10.0), energy=dict(energy(0.5), joules=0.0))
        self.assertFalse(zero.energy.available)  # a zero is no figure
        self.assertIsNone(kernel("mps", 64, 2, 10.0).energy)  # an older file: not measured
        self.assertFalse(Energy.from_record({"energy": "lots"}).available)
        failed = with_raw(kernel("mps", 64, 2, 0, status="failed"), energy=energy(0.5))
        self.assertIsNone(failed.energy)

    def test_activity(self):
        r = with_raw(kernel("mps", 64, 2, 10.0), gpu_activity={"available": True, "sm_active": 81.5, "sm_occupancy": 40,
                                                               "dram_bw": 12.0, "tensor_active": 0.0, "per_gpu": [{}]})
        a = r.activity
        self.assertEqual((a.available, a.sm_active, a.sm_occupancy, a.dram_bw, a.tensor_active, len(a.per_gpu)),
                         (True, 81.5, 40.0, 12.0, 0.0, 1))
        self.assertFalse(Activity.from_record({"gpu_activity": {"available": True, "sm_active": 130}}).available)
        self.assertEqual(Activity.from_record({"gpu_activity": {"available": False, "reason": "before Hopper"}}).reason,
                         "before Hopper")

    def test_units_of_work(self):
        self.assertEqual([work_unit(m, u, i) for m, u, i in (
            ("flop_per_s", "FLOP/s", ""), ("byte_per_s", "B/s", ""), ("item_per_s", "request/s", "request"),
            ("run_per_s", "run/s", None), ("metric_per_s", "ns/day", None), ("metric_per_s", "it/s", None),
            ("metric_per_s", "score", None))], ["FLOP", "B", "request", "run", "ns", "it", None])
        self.assertEqual(rate_unit("ns/day"), ("ns", 86400.0))
        self.assertEqual(rate_unit("images/min"), ("image", 60.0))
        self.assertIsNone(rate_unit("/s"))
        self.assertEqual([per_unit_label(u) for u in ("FLOP", "B", "run", "ns")],
                         [(1e12, "J/TFLOP"), (1e9, "J/GB"), (1.0, "J/run"), (1.0, "J/ns")])
        self.assertEqual(format_per_unit(0.0104, "request"), "0.0104 J/request")
        self.assertEqual(format_per_unit(None, "run"), "-")
        # a record's own work_unit wins (the sweep writes it for a program's own unit)
        r = with_raw(app("mps", 2, 4000.0, unit="ns/day"), energy=energy(2.0, unit="ns"))
        self.assertEqual(r.energy.unit, "ns")

    def test_one_unit_name_in_one_form(self):
        """Issue 36: "J/steps" beside "steps/s". A rate is written as given; one unit of its work is singular,
        in the record's work_unit, its label and a sentence alike, also for a file written before the rule."""
        self.assertEqual([work_unit("metric_per_s", u) for u in ("steps/s", "it/s", "images/min", "ns/day",
                                                                 "queries/h", "units/s", "run/s")],
                         ["step", "it", "image", "ns", "query", "unit", "run"])
        old = with_raw(app("mps", 2, 100.0, unit="steps/s"), energy=energy(2.5, unit="steps"))
        self.assertEqual((old.energy.unit, format_per_unit(old.energy.per_unit, old.energy.unit),
                          unit_word(old.energy.unit)), ("step", "2.50 J/step", "step"))
        new = with_raw(app("mps", 2, 100.0, unit="steps/s"), energy=energy(2.5, unit="step"))
        self.assertEqual(energy_ratio(old.energy, new.energy), 1.0)  # the same unit, however the file wrote it
        self.assertEqual(per_unit_label("FLOP"), (1e12, "J/TFLOP"))


class ProgramsOwnRate(unittest.TestCase):
    """--app-metric: the program's rate has no known span, so its energy per unit of work is J per run."""

    @staticmethod
    def metric_app(e):
        r = app("mps", 2, 4000.0, unit="ns/day")
        return with_raw(r, primary_metric="metric_per_s", aggregate={"metric_per_s": r.raw["aggregate"]["run_per_s"]},
                        app={"name": "gemm", "metric": {"method": "metric", "regex": "x", "unit": "ns/day"}}, energy=e)

    def test_read_as_joules_per_run(self):
        e = dict(energy(None, joules=300.0, span=3.0, unit="ns"), joules_per_run=12.5)
        r = self.metric_app(e)
        self.assertEqual((r.energy.per_unit, r.energy.unit), (12.5, "run"))
        self.assertEqual(format_per_unit(r.energy.per_unit, r.energy.unit), "12.5 J/run")

    def test_a_joules_per_unit_over_a_guessed_span_is_never_read(self):
        """Files written before issue 36 multiplied the rate by the whole window: not a figure to show."""
        r = self.metric_app(energy(6.87, joules=300.0, span=3.0, unit="ns"))
        self.assertTrue(r.energy.available)
        self.assertIsNone(r.energy.per_unit)
        self.assertFalse(r.energy.usable)
        self.assertIn("--app-metric", r.energy.reason)
        # a counter (--app-progress) knows its span: its J/unit is read
        progress = with_raw(r, app={"name": "md", "metric": {"method": "progress", "regex": "x", "unit": "ns/day"}})
        self.assertEqual((progress.energy.per_unit, progress.energy.unit), (6.87, "ns"))


class EnergyInVerdicts(unittest.TestCase):
    def test_a_kernel_says_throughput_and_energy_at_its_best_gain(self):
        # 512: k=2 mps 20 vs ts 10 (2.00x), 0.3 vs 0.5 J/TFLOP -> 0.60x; 4096: k=2 mps 12 vs ts 10 (1.20x),
        # 0.45 vs 0.5 -> 0.90x.  The headline is the largest gain (512).
        rs = []
        for size, mps, e_mps in ((512, 20.0, 0.3), (4096, 12.0, 0.45)):
            rs += [with_raw(kernel("timeslice", size, 2, 10.0), energy=energy(0.5 / TFLOP)),
                   with_raw(kernel("mps", size, 2, mps), energy=energy(e_mps / TFLOP))]
        [v] = verdicts(rs)
        self.assertEqual(v.line, "verdict: matmul fp32: MPS pays off at every size measured (512 to 4096; gain above "
                                 "1.1x throughout); best ranks/GPU and MPS gain [95% interval] by size: 512 k=2 2.00x "
                                 "[2.00x-2.00x], 4096 k=2 1.20x [1.20x-1.20x]; one round: the spread between processes "
                                 "was not measured (mpsbench-sweep --rounds 2 or more); MPS at k=2 (size 512): "
                                 "2.00x the throughput at 0.60x the energy per TFLOP; energy per TFLOP mps/timeslice "
                                 "by size: 512 0.60x, 4096 0.90x")

    def test_one_side_without_energy_says_nothing_of_it(self):
        rs = [with_raw(kernel("timeslice", 512, 8, 10.0), energy={"available": False, "reason": "no meter"}),
              with_raw(kernel("mps", 512, 8, 18.0), energy=energy(0.3 / TFLOP))]
        [v] = verdicts(rs)
        self.assertNotIn("energy", v.line)

    def test_an_application_in_its_own_unit(self):
        # md: timeslice 1 copy 1,500 ns/day; at 8 copies timeslice 784, mps 5,882 (7.50x, 3.92x one copy alone);
        # energy 2.0 J/ns under mps against 12.5 under timeslice at 8 copies: 0.16x.
        def md(mode, k, value, j_per_ns):
            r = app(mode, k, value, unit="ns/day")
            raw = dict(r.raw, primary_metric="metric_per_s", aggregate={"metric_per_s": r.raw["aggregate"]["run_per_s"]},
                       energy=energy(j_per_ns, unit="ns"),
                       app={"name": "md", "runs_per_hour": 37.5, "startup_share": 0.021, "bind": "core"})
            return with_raw(r, **raw)
        [v] = verdicts([md("timeslice", 1, 1500.0, 1.0), md("timeslice", 8, 784.0, 12.5), md("mps", 8, 5880.0, 2.0)])
        self.assertEqual(v.line, "verdict: md (bind=core): best mps at 8 copies per GPU, 5,880 ns/day, 37.5 runs/hour, "
                                 "start-up 2.1% of a run (3.92x one copy alone; 7.50x [7.50x-7.50x] timeslice at 8 per "
                                 "GPU); MPS at 8 copies per GPU: 7.50x the throughput at 0.16x the energy per ns; MPS "
                                 "pays off at every count measured (8 copies per GPU; gain above 1.1x throughout); MPS "
                                 "gain [95% interval] by copies per GPU: 8 7.50x [7.50x-7.50x]; one round: the spread "
                                 "between processes was not measured (mpsbench-sweep --rounds 2 or more)")

    def test_start_up_share_from_the_copies(self):
        r = app("mps", 2, 10.0, unit="steps/s")
        copies = [{"startup_s": {"median": 1.0}, "run_time_s": {"median": 10.0}},
                  {"startup_s": {"median": 3.0}, "run_time_s": {"median": 10.0}}]
        [v] = verdicts([with_raw(r, copies=copies, app={"name": "md"})])
        self.assertIn("10.0 steps/s, start-up 20.0% of a run (", v.line)


if __name__ == "__main__":
    unittest.main()
