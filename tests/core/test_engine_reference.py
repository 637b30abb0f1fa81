"""The C++ engine keeps its own derivation (it runs without Python); the core's functions are the reference
(issue 37). Recorded engine outputs, as mpsbench wrote them, against the core: every figure the engine derived
from its own measurements is what core derives from them (the analysis refuses a file where one is not)."""
import gzip
import json
import math
import os
import sys
import unittest

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..")
sys.path.insert(0, os.path.join(ROOT, "core"))

from mpsbench_core import derivations  # noqa: E402
from mpsbench_core.stats import coefficient_of_variation, jain_fairness, relative_noise, summary  # noqa: E402

#: Files the engine wrote (mpsbench, merged by mpsbench-sweep): schema versions 1 to 3, GPU and CPU, a mix.
RECORDED = ["analysis/tests/data/cpu-np4-matmul.json", "analysis/tests/data/h100-sweep-2026-11-21.json.gz",
            "analysis/tests/data/h100-mix-2026-11-25.json.gz", "results/h200-2026-11-29/command1-11.json.gz"]
WORK = {"flop_per_s": "flop", "byte_per_s": "byte", "item_per_s": "items"}


def _records(path):
    with open(os.path.join(ROOT, path), "rb") as f:
        raw = f.read()
    return json.loads(gzip.decompress(raw) if path.endswith(".gz") else raw)["results"]


def _kernel_records():
    for path in RECORDED:
        for i, r in enumerate(_records(path)):
            if r["status"] == "ok" and r.get("kernel") not in ("app", "mix") and r.get("kind", "kernel") == "kernel":
                yield f"{path} results[{i}]", r


class EngineAgainstCore(unittest.TestCase):
    def test_there_are_records_to_compare(self):
        self.assertGreater(sum(1 for _ in _kernel_records()), 500)

    def test_aggregate_samples_are_the_work_over_the_window(self):
        for where, r in _kernel_records():
            for key, work in WORK.items():
                total = derivations.kernel_work(r["active_ranks"], r["iterations_per_repetition"],
                                                r["work_per_iteration"][work])
                expected = derivations.rate_samples([total] * len(r["window_s"]), r["window_s"])
                for got, want in zip(r["aggregate"][key]["samples"], expected):
                    self.assertTrue(math.isclose(got, want, rel_tol=1e-12), f"{where} {key}: {got} vs {want}")

    def test_summaries_cv_noise_and_fairness_are_cores(self):
        for where, r in _kernel_records():
            primary = r["aggregate"][r["primary_metric"]]["samples"]
            for key in WORK:
                agg = r["aggregate"][key]
                self.assertEqual({k: agg[k] for k in ("median", "min", "max")},
                                 {k: v for k, v in summary(agg["samples"]).items() if k != "samples"}, where)
            self.assertTrue(math.isclose(r["aggregate_cv"], coefficient_of_variation(primary), rel_tol=1e-9,
                                         abs_tol=1e-15), where)
            self.assertTrue(math.isclose(r["jain_fairness"], jain_fairness([x["throughput_per_s"] for x in r["ranks"]]),
                                         rel_tol=1e-9), where)
            relative = (r.get("noise") or {}).get("relative")
            if relative is not None:
                self.assertTrue(math.isclose(relative, relative_noise(primary), rel_tol=1e-9), where)

    def test_a_mix_tenants_slowdown_is_cores_ratio(self):
        mixes = [r for r in _records("analysis/tests/data/h100-mix-2026-11-25.json.gz") if r.get("tenants")]
        self.assertTrue(mixes)
        for r in mixes:
            for t in r["tenants"]:
                want = derivations.ratio(t["alone_throughput"], t["throughput"]["median"])
                self.assertTrue(t["slowdown"] == want or math.isclose(t["slowdown"], want, rel_tol=1e-12))


if __name__ == "__main__":
    unittest.main()
