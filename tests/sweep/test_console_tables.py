"""The console's tables after the comparison table, on hand-made records: a mix shows its tenants (no "size 0 ...
MPS gain" headline), kernels with energy show J per unit of work and SM active per mode, an application pinned to
cores is a row (and a verdict) of its own."""
import unittest

import sweeptest  # noqa: F401  (the packages' paths)
from mpsbench_sweep.console_report import console_report  # noqa: E402
from mpsbench_sweep.console_tables import per_unit  # noqa: E402


def tenant(kernel, precision, size, k, slowdown, p99=None, ratio=None):
    return {"kernel": kernel, "precision": precision, "size": size, "params": {}, "ranks_per_gpu": k,
            "primary_metric": "flop_per_s", "primary_unit": "FLOP/s", "throughput": {"median": 1.0},
            "latency": {"overall": {"p99": p99}} if p99 is not None else None, "alone_throughput": 1.0,
            "alone_latency_p99_s": None, "slowdown": slowdown, "latency_p99_ratio": ratio}


def mix(mode, tenants, pct=None):
    return {"kind": "mix", "kernel": "mix", "precision": "matmul/fp32/4096:4,inference/fp16/8:4", "size": 0,
            "ranks_per_gpu": 8, "mode": mode, "mps_active_thread_percentage": pct, "status": "ok", "verified": True,
            "primary_metric": "flop_per_s", "primary_unit": "FLOP/s", "aggregate": {"flop_per_s": {"median": 1e12}},
            "tenants": tenants}


def kernel(mode, k, flops, joules_per_flop=None, sm=None):
    r = {"kind": "kernel", "kernel": "matmul", "precision": "fp32", "size": 4096, "ranks_per_gpu": k, "mode": mode,
         "mps_active_thread_percentage": None, "primary_metric": "flop_per_s", "primary_unit": "FLOP/s",
         "status": "ok", "verified": True, "aggregate": {"flop_per_s": {"median": flops}}}
    if joules_per_flop is not None:
        r["energy"] = {"available": True, "joules": 100.0, "joules_per_unit": joules_per_flop, "mean_power_w": 300.0}
        r["gpu_activity"] = {"available": True, "sm_active": sm, "sm_occupancy": 20.0, "dram_bw": 5.0,
                             "tensor_active": 0.0}
    else:
        r["energy"] = {"available": False, "reason": "the CPU device"}
    return r


class Tables(unittest.TestCase):
    def test_a_mix_shows_its_tenants_not_one_headline(self):
        doc = {"results": [
            mix("timeslice", [tenant("matmul", "fp32", 4096, 4, 1.9),
                              tenant("inference", "fp16", 8, 4, 4.7, 8e-4, 4.9)]),
            mix("mps", [tenant("matmul", "fp32", 4096, 4, 1.42),
                        tenant("inference", "fp16", 8, 4, 200.0, 0.0325, 191.0)]),
            mix("mps-qos", [tenant("matmul", "fp32", 4096, 4, 2.1), tenant("inference", "fp16", 8, 4, 1.18, 2e-4, 1.2)],
                pct=12)]}
        text = console_report(doc)
        self.assertNotIn("MPS gain", text)
        self.assertNotRegex(text, r"mix\s+\S+\s+0\s")  # no "size 0" row
        lines = text.splitlines()
        head = next(i for i, line in enumerate(lines) if line.startswith("mix matmul/fp32/4096:4,inference/fp16/8:4"))
        self.assertIn("8 ranks per GPU", lines[head])
        self.assertEqual(lines[head + 1].split(), ["tenant", "timeslice", "mps", "mps-qos", "12%"])
        self.assertEqual(lines[head + 2].split(), ["matmul/fp32/4096:4", "1.90x", "1.42x", "2.10x"])
        inference = lines[head + 3]
        for cell in ("4.70x, p99 4.90x (800 µs)", "200.00x, p99 191.00x (32.5 ms)", "1.18x, p99 1.20x (200 µs)"):
            self.assertIn(cell, inference)

    def test_energy_and_sm_activity_per_mode(self):
        doc = {"results": [kernel("timeslice", 2, 20e12, 2e-12, 45.0), kernel("mps", 2, 40e12, 1e-12, 87.0),
                           kernel("streams", 2, 30e12)]}
        lines = console_report(doc).splitlines()
        head = next(i for i, line in enumerate(lines) if line.startswith("energy and SM activity"))
        self.assertEqual(lines[head + 1].split(), ["kernel", "precision", "size", "ranks/gpu", "timeslice", "J/unit",
                                                   "mps", "J/unit", "timeslice", "SM", "mps", "SM"])
        self.assertEqual(lines[head + 2].split(), ["matmul", "fp32", "4096", "2", "2.00", "J/TFLOP", "1.00", "J/TFLOP",
                                                   "45%", "87%"])

    def test_joules_per_unit_reads_in_a_readable_unit(self):
        self.assertEqual(per_unit(2e-12, "FLOP"), "2.00 J/TFLOP")
        self.assertEqual(per_unit(4406.4, "ns"), "4,406 J/ns")
        self.assertEqual(per_unit(None, "ns"), "-")

    def test_a_pinned_application_is_a_row_and_a_verdict_of_its_own(self):
        def app(bind, mode, k, value):
            return {"kind": "app", "app": {"name": "md", "bind": bind, "runs_per_hour": 3600.0,
                                           "metric": {"method": "metric", "regex": "x", "unit": "ns/day"}},
                    "mode": mode, "mps_active_thread_percentage": None, "ranks_per_gpu": k, "status": "ok",
                    "verified": True, "primary_metric": "metric_per_s", "primary_unit": "ns/day",
                    "aggregate": {"metric_per_s": {"median": value}, "run_per_s": {"median": 1.0}}, "copies": []}

        doc = {"results": [app(b, m, k, v) for b, m, k, v in (
            ("none", "timeslice", 1, 800.0), ("none", "mps", 1, 780.0), ("none", "timeslice", 8, 790.0),
            ("none", "mps", 8, 5882.0), ("core", "timeslice", 1, 810.0), ("core", "mps", 8, 6100.0),
            ("core", "timeslice", 8, 800.0))]}
        text = console_report(doc)
        self.assertRegex(text, r"app\s+md\s+bind=core\s+-\s+8\s+800 ns/day\s+6,100 ns/day\s+7\.62x")
        self.assertIn("verdict: md: best mps at 8 copies per GPU, 5,882 ns/day, 3,600 runs/hour (7.35x one copy "
                      "alone; 7.45x [7.45x-7.45x] timeslice at 8 per GPU)", text)  # runs/hour beside the own figure (issue 26)
        self.assertIn("verdict: md (bind=core): best mps at 8 copies per GPU, 6,100 ns/day", text)


if __name__ == "__main__":
    unittest.main()
