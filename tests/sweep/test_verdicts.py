"""The verdict lines after the sweep's table, on hand-computed fixtures.

The verdict is mpsbench_core.verdict's (the analysis prints the same lines): at each size, in each mode, the
fewest ranks per GPU whose throughput is within noise of that mode's fastest (ok and verified); the gain is
the best of mps over the best of timeslice, and it pays off where its 95 % interval lies above the threshold. These records have one round and no repetition noise, so every interval is its point.
These cases check that the sweep's console report prints exactly those lines.
"""
import unittest

import sweeptest  # noqa: F401  (the packages' paths)
from mpsbench_core.records import results_of  # noqa: E402
from mpsbench_core.verdict import KernelVerdict, verdict_lines, verdicts  # noqa: E402
from mpsbench_sweep.console_report import console_report  # noqa: E402


class merge:  # noqa: N801  (the names these cases were written against)
    """The verdict lines of kernel records as the sweep prints them (applications' lines follow them)."""

    @staticmethod
    def kernel_verdicts(results, threshold=None):
        found = verdicts(results_of([{"results": results}]), threshold)
        return verdict_lines([v for v in found if isinstance(v, KernelVerdict)])

    @staticmethod
    def table(doc, threshold=None):
        return console_report(doc, threshold)


def result(mode, size, k, value, kernel="matmul", precision="fp32", status="ok", verified=True):
    r = {"kind": "kernel", "kernel": kernel, "precision": precision, "size": size, "ranks_per_gpu": k, "mode": mode,
         "mps_active_thread_percentage": None, "primary_metric": "flop_per_s", "primary_unit": "FLOP/s",
         "status": status, "verified": verified}
    if status == "ok":
        r["aggregate"] = {"flop_per_s": {"median": value}}
    return r


def grid(timeslice, mps, **kw):
    """{size: [value at k=1, 2, 4]} per mode -> results."""
    out = []
    for mode, table in (("timeslice", timeslice), ("mps", mps)):
        for size, values in table.items():
            out += [result(mode, size, k, v, **kw) for k, v in zip((1, 2, 4), values) if v is not None]
    return out


# matmul fp32, hand-computed (timeslice's best is k=1 at every size: 100, 200, 400 and 800, a tie at the
# larger two going to the fewest ranks):
#   512:  best mps k=4 (300) -> 3.00x
#   1024: best mps k=2 (260) -> 1.30x
#   2048: best mps k=4 (430) -> 1.075x  (below 1.1)
#   4096: best mps k=4 (805) -> 1.006x  (below 1.1)
# the crossover lies between 1024 and 2048.
TIMESLICE = {512: [100, 90, 80], 1024: [200, 190, 180], 2048: [400, 400, 400], 4096: [800, 800, 800]}
MPS = {512: [100, 180, 300], 1024: [200, 260, 250], 2048: [400, 420, 430], 4096: [790, 800, 805]}


class KernelVerdicts(unittest.TestCase):
    maxDiff = None

    def test_crossover_size_and_best_k(self):
        self.assertEqual(merge.kernel_verdicts(grid(TIMESLICE, MPS)), [
            "verdict: matmul fp32: MPS pays off at 512 and 1024 (gain above 1.1x); does not at 2048 and 4096; the "
            "crossover lies between 1024 and 2048; best ranks/GPU and MPS gain [95% interval] by size: 512 k=4 vs "
            "timeslice k=1 3.00x [3.00x-3.00x], 1024 k=2 vs timeslice k=1 1.30x [1.30x-1.30x], 2048 k=4 vs timeslice "
            "k=1 1.07x [1.07x-1.07x], 4096 k=4 vs timeslice k=1 1.01x [1.01x-1.01x]; one round: the spread between processes was not measured (mpsbench-sweep --rounds 2 or more)"])

    def test_threshold(self):
        (line,) = merge.kernel_verdicts(grid(TIMESLICE, MPS), threshold=1.5)
        self.assertTrue(line.startswith("verdict: matmul fp32: MPS pays off at 512 (gain above 1.5x); does not at 1024, "
                                        "2048 and 4096; the crossover lies between 512 and 1024;"), line)
        (line,) = merge.kernel_verdicts(grid(TIMESLICE, MPS), threshold=1.0)
        self.assertTrue(line.startswith("verdict: matmul fp32: MPS pays off at every size measured (512 to 4096; gain "
                                        "above 1x throughout);"), line)

    def test_never_every_and_from(self):
        # nbody: the best mps k is 1 at both sizes, gain 1.0: never.
        never = grid({4096: [10, 9, 8], 65536: [20, 19, 18]}, {4096: [10, 9.5, 9], 65536: [20, 19, 18]},
                     kernel="nbody")
        self.assertEqual(merge.kernel_verdicts(never), [
            "verdict: nbody fp32: MPS does not pay off at any size measured (gain below 1.1x); best ranks/GPU and MPS "
            "gain [95% interval] by size: 4096 k=1 1.00x [1.00x-1.00x], 65536 k=1 1.00x [1.00x-1.00x]; one round: the spread between processes was not measured (mpsbench-sweep --rounds 2 or more)"])
        every = grid({64: [1, 1, 1]}, {64: [1, 2, 3]}, kernel="hybrid", precision="fp32-cpu-heavy")
        self.assertEqual(merge.kernel_verdicts(every), [
            "verdict: hybrid fp32-cpu-heavy: MPS pays off at every size measured (64; gain above 1.1x throughout); "
            "best ranks/GPU and MPS gain [95% interval] by size: 64 k=4 vs timeslice k=1 3.00x [3.00x-3.00x]; one round: the spread between processes was not measured (mpsbench-sweep --rounds 2 or more)"])
        # 64: every k gives 4 in both modes, the tie goes to k=1: 1.00x; 128: mps k=4 (5) / timeslice k=1 (4).
        larger = grid({64: [4, 4, 4], 128: [4, 2, 1]}, {64: [4, 4, 4], 128: [4, 4, 5]})
        self.assertEqual(merge.kernel_verdicts(larger), [
            "verdict: matmul fp32: MPS pays off at 128 (gain above 1.1x); does not at 64; the crossover lies between "
            "64 and 128; best ranks/GPU and MPS gain [95% interval] by size: 64 k=1 1.00x [1.00x-1.00x], 128 k=4 vs "
            "timeslice k=1 1.25x [1.25x-1.25x]; one round: the spread between processes was not measured (mpsbench-sweep --rounds 2 or more)"])

    def test_ties_go_to_fewer_ranks(self):
        (line,) = merge.kernel_verdicts(grid({8: [1, 1, 1]}, {8: [1, 2, 2]}))
        self.assertIn("by size: 8 k=2 vs timeslice k=1 2.00x [2.00x-2.00x];", line)

    def test_missing_modes(self):
        streams_only = [dict(result("streams", 64, k, 5.0), instances_per_rank=k) for k in (1, 2)]
        timeslice_streams = grid(TIMESLICE, {}) + streams_only
        self.assertEqual(merge.kernel_verdicts(streams_only), [
            "verdict: matmul fp32: no MPS verdict: timeslice and mps not measured (measured: streams)"])
        self.assertEqual(merge.kernel_verdicts(timeslice_streams), [
            "verdict: matmul fp32: no MPS verdict: mps not measured (measured: timeslice, streams)"])
        # The same for every kernel (the CPU device runs streams only): said once.
        nbody = [dict(r, kernel="nbody") for r in streams_only]
        self.assertEqual(merge.kernel_verdicts(streams_only + nbody), [
            "verdict: every kernel: no MPS verdict: timeslice and mps not measured (measured: streams)"])
        self.assertEqual(len(merge.kernel_verdicts(streams_only + grid({8: [1, 1, 1]}, {8: [1, 1, 1]},
                                                                       kernel="nbody"))), 2)
        # mps-qos alone is not mps.
        qos = grid(TIMESLICE, {}) + [dict(result("mps-qos", 512, 2, 1.0), mps_active_thread_percentage=50)]
        self.assertIn("mps not measured (measured: timeslice, mps-qos)", merge.kernel_verdicts(qos)[0])

    def test_failed_and_unverified_configurations(self):
        results = grid(TIMESLICE, MPS)
        for r in results:
            if (r["mode"], r["size"], r["ranks_per_gpu"]) == ("mps", 512, 4):  # out of memory
                r.update(status="failed", error="rank 3: out of memory")
                del r["aggregate"]
            if (r["mode"], r["size"], r["ranks_per_gpu"]) == ("timeslice", 1024, 2):  # wrong answer
                r["verified"] = False
        # 512: k=4 failed, best mps is k=2 (180 / timeslice's best, 100 at k=1 = 1.80x); 1024: mps k=2 (260) against
        # timeslice's best of k=1 and 4 (k=2 unverified), 200 at k=1: 1.30x.
        self.assertEqual(merge.kernel_verdicts(results), [
            "verdict: matmul fp32: MPS pays off at 512 and 1024 (gain above 1.1x); does not at 2048 and 4096; the "
            "crossover lies between 1024 and 2048; best ranks/GPU and MPS gain [95% interval] by size: 512 k=2 vs "
            "timeslice k=1 1.80x [1.80x-1.80x], 1024 k=2 vs timeslice k=1 1.30x [1.30x-1.30x], 2048 k=4 vs timeslice "
            "k=1 1.07x [1.07x-1.07x], 4096 k=4 vs timeslice k=1 1.01x [1.01x-1.01x]; one round: the spread between processes was not measured (mpsbench-sweep --rounds 2 or more); 2 round(s) failed or unverified, left out"])

    def test_everything_failed(self):
        results = [result("timeslice", 512, 1, None, status="failed"), result("mps", 512, 1, 5.0, verified=False)]
        self.assertEqual(merge.kernel_verdicts(results), [
            "verdict: matmul fp32: no MPS verdict: no size has verified mps and timeslice results; 2 round(s) "
            "failed or unverified, left out"])

    def test_order_and_apps_after_the_kernels(self):
        app = {"kernel": "app", "precision": "solver", "size": None, "ranks_per_gpu": 1, "mode": "timeslice",
               "mps_active_thread_percentage": None, "primary_metric": "item_per_s", "primary_unit": "run/s",
               "status": "ok", "verified": True, "aggregate": {"item_per_s": {"median": 1.0}}}  # version 2
        results = (grid({8: [1, 1, 1]}, {8: [1, 1, 2]}, kernel="nbody") + [app] +
                   grid({8: [1, 1, 1]}, {8: [1, 1, 1]}, precision="bf16"))
        lines = merge.kernel_verdicts(results)
        self.assertEqual([l.split(":")[1] for l in lines], [" nbody fp32", " matmul bf16"])
        printed = console_report({"results": results}).splitlines()
        self.assertEqual([l.split(":")[1] for l in printed if l.startswith("verdict: ")],
                         [" nbody fp32", " matmul bf16", " solver"])

    def test_table_ends_with_the_verdicts(self):
        text = merge.table({"results": grid(TIMESLICE, MPS)}, threshold=1.1)
        lines = text.splitlines()
        self.assertTrue(lines[-2].startswith("verdict: matmul fp32: MPS pays off at 512 and 1024"), lines[-2])
        self.assertTrue(lines[-1].startswith("A/A (1 rank per GPU, mps against timeslice: one process either way): 4 "
                                             "of 4 gains within 3% of 1.0"), lines[-1])
        self.assertIn("it pays off where its 95% interval lies above 1.1x", text)
        row = next(l.split() for l in lines if l.split()[:4] == ["matmul", "fp32", "512", "4"])
        # the table's MPS gain column is mps / timeslice at the same k (300 / 80 at k=4), with its interval; the
        # verdict's, the best of each mode (3.00x), answers the other question
        self.assertIn("3.75x [3.75-3.75]", " ".join(row))
        # No verdict (and no verdict note) for farmed applications alone.
        app_only = merge.table({"results": []})
        self.assertEqual(app_only, "no results to compare")


if __name__ == "__main__":
    unittest.main()
