"""The mode registry, the typed records and the units of core/mpsbench_core, and the registry against the schema."""
import json
import math
import os
import unittest

from corecase import app, kernel
from mpsbench_core import modes, records, stats, units

SCHEMA = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "schema",
                      "mpsbench-results.schema.json")


class Modes(unittest.TestCase):
    def test_registry_is_the_schema_enum(self):
        with open(SCHEMA, encoding="utf-8") as f:
            schema = json.load(f)
        self.assertEqual(tuple(schema["definitions"]["mode"]["enum"]), modes.NAMES)

    def test_derived_sets(self):
        self.assertEqual(modes.DEFAULT_SWEEP_MODES, ("timeslice", "mps", "mps-qos", "streams"))
        self.assertEqual(modes.MPS_MODES, ("mps", "mps-qos", "mps-mem"))
        self.assertEqual(modes.ONE_PROCESS_MODES, ("streams", "green"))
        self.assertNotIn("mixed", modes.SWEEP_MODES)
        self.assertIs(modes.BY_NAME["timeslice"].expects_mps_client, False)
        self.assertIs(modes.BY_NAME["mps-mem"].expects_mps_client, True)
        self.assertIsNone(modes.BY_NAME["cpu"].expects_mps_client)

    def test_labels_and_their_order(self):
        self.assertEqual(modes.label({"mode": "mps-qos", "mps_active_thread_percentage": 50}), "mps-qos:50%")
        self.assertEqual(modes.label({"mode": "mps-qos", "mps_active_thread_percentage": None}), "mps-qos")
        self.assertEqual(modes.label({"mode": "mps-mem", "mps_pinned_device_mem_limit": "2G"}), "mps-mem:2G")
        self.assertEqual(modes.label({"mode": "mps", "mps_active_thread_percentage": 25}), "mps")
        labels = ["green", "mps-mem:8G", "mps-qos:50%", "weird", "mps-mem:512M", "mps-qos:12.5%", "timeslice", "mps"]
        self.assertEqual(sorted(labels, key=modes.sort_key),
                         ["timeslice", "mps", "mps-qos:12.5%", "mps-qos:50%", "mps-mem:512M", "mps-mem:8G", "green",
                          "weird"])

    def test_styles_tell_every_mode_apart_without_colour(self):
        looks = {(m.style.marker, str(m.style.linestyle), m.style.hatch) for m in modes.MODES}
        self.assertEqual(len(looks), len(modes.MODES))
        self.assertEqual(modes.style("mps-qos:50%").marker, "v")
        self.assertNotEqual(modes.style("mps-qos:25%").color, modes.style("mps-qos:50%").color)
        self.assertEqual(modes.style("unknown"), modes.OTHER_STYLE)


class Records(unittest.TestCase):
    def test_kinds_of_every_version(self):
        self.assertEqual(records.kind_of({"kernel": "app"}), "app")
        self.assertEqual(records.kind_of({"kernel": "mix"}), "mix")
        self.assertEqual(records.kind_of({"kernel": "matmul"}), "kernel")
        self.assertEqual(records.kind_of({"kind": "app", "kernel": "matmul"}), "app")

    def test_an_app_is_named_by_its_name_in_every_version(self):
        for version in (2, 3):
            r = app("mps", 2, 1.5, name="lammps", version=version)
            self.assertEqual((r.kind, r.name, r.precision, r.size, r.median), ("app", "lammps", "", None, 1.5))

    def test_failed_results_have_no_figure(self):
        r = kernel("mps", 64, 1, 0, status="failed")
        self.assertEqual((r.median, r.samples, r.usable), (None, (), False))
        self.assertFalse(kernel("mps", 64, 1, 1.0, verified=False).usable)
        self.assertFalse(kernel("mps", 64, 1, 0.0).usable)


class Units(unittest.TestCase):
    def test_si(self):
        self.assertEqual(units.format_si(4.82e13, "FLOP/s"), "48.2 TFLOP/s")
        self.assertEqual(units.format_si(4.82e13, "FLOP/s", decimals=2), "48.20 TFLOP/s")
        self.assertEqual(units.format_si(1.5e9, "pairs/s"), "1.50 G pairs/s")
        self.assertEqual(units.format_si(None, "B/s"), "-")
        self.assertEqual(units.format_si(math.nan, "B/s"), "-")

    def test_counts_and_ratios(self):
        self.assertEqual(units.format_count(5882.4, "ns/day"), "5,882 ns/day")
        self.assertEqual(units.format_count(12.34, "it/s"), "12.3 it/s")
        self.assertEqual(units.format_ratio(1.2345), "1.23x")
        self.assertEqual(units.format_ratio(None), "-")


class Stats(unittest.TestCase):
    def test_jain_and_summary(self):
        self.assertEqual(stats.jain_fairness([2.0, 2.0, 2.0]), 1.0)
        self.assertAlmostEqual(stats.jain_fairness([1.0, 0.0, 0.0, 0.0]), 0.25)
        self.assertEqual(stats.jain_fairness([]), 1.0)
        self.assertEqual(stats.summary([3.0, 1.0, 2.0]), {"median": 2.0, "min": 1.0, "max": 3.0,
                                                           "samples": [3.0, 1.0, 2.0]})


if __name__ == "__main__":
    unittest.main()
