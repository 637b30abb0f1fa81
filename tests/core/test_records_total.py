"""Result.from_json is total: any JSON value gives a Result (the sweep's console reads unvalidated files)."""
import json
import math
import random
import unittest

import corecase  # noqa: F401  (the core package's path)
from mpsbench_core.records import Result, params_text, results_of
from mpsbench_core.verdict import verdict_lines, verdicts

GOOD = {"kind": "kernel", "kernel": "matmul", "precision": "fp32", "size": 64, "ranks_per_gpu": 2, "params": {},
        "mode": "mps", "mps_active_thread_percentage": None, "status": "ok", "verified": True,
        "primary_metric": "flop_per_s", "primary_unit": "FLOP/s", "error": None,
        "aggregate": {"flop_per_s": {"median": 2.0, "min": 1.0, "max": 3.0, "samples": [1.0, 2.0, 3.0]}}}
HOSTILE = [None, True, False, 0, -1, 1.5, float("nan"), float("inf"), -float("inf"), 10 ** 400, "", "x", "4", [],
           [1, 2], [None], {}, {"a": 1}, {"median": "x"}, [[[]]], "\x1b[31m"]


class Total(unittest.TestCase):
    def test_hostile_field_types(self):
        for field in list(GOOD) + ["app", "copies", "ranks", "tenants", "energy", "gpu_activity"]:
            for value in HOSTILE:
                with self.subTest(field=field, value=value):
                    r = Result.from_json({**GOOD, field: value})
                    self.assertIsInstance(r.ranks_per_gpu, int)
                    self.assertIsInstance(r.params, str)
                    self.assertTrue(r.median is None or math.isfinite(r.median))
                    r.energy, r.activity, r.usable, r.subject  # noqa: B018  (must not raise either)

    def test_the_named_gaps(self):
        for value, expected in ((None, 0), ("x", 0), (float("nan"), 0), (4.0, 4), (True, 0), (10 ** 400, 10 ** 400)):
            self.assertEqual(Result.from_json({**GOOD, "ranks_per_gpu": value}).ranks_per_gpu, expected)
        self.assertEqual(Result.from_json({**GOOD, "params": [1, 2]}).params, "")
        self.assertEqual(Result.from_json({**GOOD, "params": "hidden=1"}).params, "")
        listed = Result.from_json({**GOOD, "primary_metric": ["flop_per_s"]})
        self.assertEqual((listed.median, listed.samples), (None, ()))
        self.assertEqual(Result.from_json({**GOOD, "aggregate": {"flop_per_s": {"median": float("inf")}}}).median, None)
        self.assertEqual(Result.from_json({**GOOD, "size": True}).size, None)
        self.assertEqual(Result.from_json({**GOOD, "verified": "yes"}).verified, False)
        self.assertEqual(Result.from_json({**GOOD, "mps_active_thread_percentage": 10 ** 400}).mode_label, "mps")
        self.assertEqual(params_text({"b": 1, "a": [2]}), "a=[2],b=1")

    def test_records_that_are_not_objects(self):
        for value in HOSTILE:
            r = Result.from_json(value)
            self.assertEqual((r.kind, r.median, r.usable), ("kernel", None, False))
        self.assertEqual(results_of([{"results": [GOOD, 3, None]}, [], None, {"results": "x"}])[0].median, 2.0)

    def test_random_records_through_the_verdicts(self):
        """Seeded random records (every field a hostile value, or a good one) through verdicts and lines."""
        rng = random.Random(26)
        keys = list(GOOD) + ["app", "copies", "tenants", "energy", "gpu_activity", "kind"]
        for _ in range(300):
            records = []
            for _ in range(rng.randint(1, 6)):
                r = dict(GOOD, mode=rng.choice(["mps", "timeslice", "mps-qos"]), kind=rng.choice(["kernel", "mix",
                                                                                                  "app"]))
                for key in rng.sample(keys, rng.randint(1, 4)):
                    r[key] = rng.choice(HOSTILE + [[{"kernel": "x", "slowdown": rng.choice(HOSTILE)}]])
                records.append(json.loads(json.dumps(r, default=str)) if rng.random() < 0.5 else r)
            for line in verdict_lines(verdicts(results_of([{"results": records}]))):
                self.assertTrue(line.startswith("verdict: "))


if __name__ == "__main__":
    unittest.main()
