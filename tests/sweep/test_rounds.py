"""mpsbench-sweep --rounds: the plan in run order, a whole sweep of two rounds against the fakes, bad values."""
import json
import os
import unittest

from sweeptest import OneLine, SweepTestCase

from mpsbench_core.round_order import mode_order  # noqa: E402
from mpsbench_sweep import plan  # noqa: E402

KERNEL_MODES = ("timeslice", "mps", "mps-qos", "streams")


def kernel_plan(rounds, modes=KERNEL_MODES, ranks=(1, 2)):
    return plan.plan_jobs(list(modes), list(ranks), None, 1, 1, rounds=rounds)


class KernelPlan(unittest.TestCase):
    def test_one_round_is_the_plan_without_rounds(self):
        jobs = kernel_plan(1)
        self.assertEqual([(j.index, j.mode, j.k, j.round, j.part_name, j.label()) for j in jobs], [
            (0, "timeslice", 1, 0, "part-timeslice.json", "timeslice"),
            (1, "mps", 1, 0, "part-mps.json", "mps"),
            (2, "mps-qos", 1, 0, "part-mps-qos-k1-p100.json", "mps-qos k=1 100%"),
            (3, "mps-qos", 2, 0, "part-mps-qos-k2-p50.json", "mps-qos k=2 50%"),
            (4, "streams", 1, 0, "part-streams.json", "streams")])

    def test_rounds_interleave_the_modes_and_keep_the_qos_jobs_together_in_k_order(self):
        for rounds in (2, 3):
            jobs = kernel_plan(rounds)
            self.assertEqual([j.index for j in jobs], list(range(5 * rounds)))
            want = [(m, r) for r in range(rounds) for m in mode_order(KERNEL_MODES, r)
                    for _ in range(2 if m == "mps-qos" else 1)]
            self.assertEqual([(j.mode, j.round) for j in jobs], want)
            for r in range(rounds):
                self.assertEqual([j.k for j in jobs if j.mode == "mps-qos" and j.round == r], [1, 2])
        jobs = kernel_plan(3)
        self.assertEqual([j.part_name for j in jobs[5:10]], [
            "part-streams-r1.json", "part-mps-qos-k1-p100-r1.json", "part-mps-qos-k2-p50-r1.json",
            "part-mps-r1.json", "part-timeslice-r1.json"])
        self.assertEqual(jobs[12].label(), "mps-qos k=2 50%, round 3 of 3")
        self.assertEqual(jobs[12].setting_label(), "mps-qos k=2 50%")
        self.assertEqual(len({j.part_name for j in jobs}), 15, "every run has a part file of its own")

    def test_a_mix_and_memory_limits_run_like_the_kernels(self):
        jobs = plan.plan_jobs(["timeslice", "mps", "mps-mem"], [4], None, 1, 1, mem_limits=["1G", "2G"], mix=True,
                              rounds=2)
        self.assertEqual([(j.mode, j.mem_limit, j.round, j.mix) for j in jobs], [
            ("timeslice", None, 0, True), ("mps", None, 0, True), ("mps-mem", "1G", 0, True),
            ("mps-mem", "2G", 0, True), ("mps-mem", "1G", 1, True), ("mps-mem", "2G", 1, True),
            ("mps", None, 1, True), ("timeslice", None, 1, True)])
        self.assertEqual(jobs[4].part_name, "part-mps-mem-1G-r1.json")


class AppPlan(unittest.TestCase):
    def plan(self, rounds, binds=("none",)):
        return plan.plan_app_jobs(["timeslice", "mps", "mps-qos"], [1, 2], None, lambda k: k, binds, rounds)

    def test_each_k_runs_every_mode_side_by_side_one_copy_first(self):
        self.assertEqual([(j.k, j.mode, j.part_name) for j in self.plan(1)], [
            (1, "timeslice", "part-app-timeslice-k1.json"), (1, "mps", "part-app-mps-k1.json"),
            (1, "mps-qos", "part-app-mps-qos-k1-p100.json"), (2, "timeslice", "part-app-timeslice-k2.json"),
            (2, "mps", "part-app-mps-k2.json"), (2, "mps-qos", "part-app-mps-qos-k2-p50.json")])

    def test_rounds_and_bindings(self):
        for rounds in (2, 3):
            jobs = self.plan(rounds, binds=("none", "core"))
            want = [(r, b, k, m) for r in range(rounds) for b in ("none", "core") for k in (1, 2)
                    for m in mode_order(["timeslice", "mps", "mps-qos"], r)]
            self.assertEqual([(j.round, j.bind, j.k, j.mode) for j in jobs], want)
            self.assertEqual([j.index for j in jobs], list(range(len(want))))
        jobs = self.plan(2)
        self.assertEqual([j.part_name for j in jobs[6:9]], [
            "part-app-mps-qos-k1-p100-r1.json", "part-app-mps-k1-r1.json", "part-app-timeslice-k1-r1.json"])
        self.assertEqual(jobs[7].label(), "mps k=1, round 2 of 2")


class TwoRounds(OneLine, SweepTestCase):
    def test_every_record_twice_the_orders_recorded_and_the_daemon_only_around_mps_jobs(self):
        timeline = os.path.join(self.tmp, "timeline.log")
        r = self.sweep(self.fake_args("--keep-parts", modes=",".join(KERNEL_MODES), ranks="1,2", rounds="2"),
                       FAKE_JOB_ENV_LOG=timeline, FAKE_MPS_EVENT_LOG=timeline, FAKE_JOB_TIMING="1")
        self.assertEqual(r.returncode, 0, r.stderr)
        doc = self.merged()
        self.assertTrue(doc["complete"])
        sweep = doc["context"]["sweep"]
        orders = [list(mode_order(KERNEL_MODES, r)) for r in (0, 1)]
        self.assertEqual(sweep["rounds"], {"count": 2, "orders": orders})
        # Every configuration twice, once per round, each record saying its round.
        configs = {}
        for x in doc["results"]:
            key = (x["mode"], x["ranks_per_gpu"], x["mps_active_thread_percentage"])
            configs.setdefault(key, []).append(x["round"])
        self.assertEqual(len(configs), 8)
        self.assertEqual({k: sorted(v) for k, v in configs.items()}, {k: [0, 1] for k in configs})
        ran = [(j["mode"], j["round"], j["status"]) for j in sweep["jobs"]]
        self.assertEqual(ran, [(m, r, "ok") for r in (0, 1) for m in orders[r]
                               for _ in range(2 if m == "mps-qos" else 1)])
        self.assertEqual(sorted(n for n in os.listdir(self.workdir) if n.startswith("part-mps-r")),
                         ["part-mps-r0.json", "part-mps-r0.log", "part-mps-r1.json", "part-mps-r1.log"])
        self.assertIn("[9/10] mps, round 2 of 2: ", r.stderr)
        # One time line of daemons and jobs: a daemon starts right before its mode's stretch and has exited
        # before the next job of another mode; no job outside an MPS mode runs while one is alive.
        with open(timeline) as f:
            events = [json.loads(line) for line in f]
        seen = [f"{e['daemon']} daemon" if "daemon" in e else e["mode"] for e in events]
        self.assertEqual(seen, [
            "timeslice", "started daemon", "mps", "exits daemon", "started daemon", "mps-qos", "mps-qos",
            "exits daemon", "streams",
            "streams", "started daemon", "mps-qos", "mps-qos", "exits daemon", "started daemon", "mps", "exits daemon",
            "timeslice"])
        alive = None
        for e in events:
            if "daemon" in e:
                alive = e["pipe"] if e["daemon"] == "started" else None
            elif e["mode"] in ("mps", "mps-qos"):
                self.assertEqual(e["env"]["CUDA_MPS_PIPE_DIRECTORY"], alive)
        self.assertEqual([(d["mode"], d["round"], d["verified_gone"]) for d in sweep["daemons"]],
                         [("mps", 0, True), ("mps-qos", 0, True), ("mps-qos", 1, True), ("mps", 1, True)])
        self.assertEqual(sorted(n for n in os.listdir(self.workdir) if n.startswith("mps-logs-")),
                         ["mps-logs-mps", "mps-logs-mps-2", "mps-logs-mps-qos", "mps-logs-mps-qos-2"])
        # The timing line per round, the time profile per job run, and they still add up.
        self.assertIn("jobs: round 1: timeslice ", r.stderr)
        self.assertIn("; round 2: streams ", r.stderr)
        self.assertRegex(r.stderr, r"MPS: mps 2 daemons start [0-9.]+ s, stop [0-9.]+ s; mps-qos 2 daemons")
        prof = sweep["time_profile"]
        self.assertEqual([j["label"] for j in prof["jobs"]], [j["label"] for j in sweep["jobs"]])
        self.assertEqual(prof["jobs"][-1]["label"], "timeslice, round 2 of 2")
        outside = prof["daemon_start_s"] + prof["daemon_stop_s"] + prof["merge_s"] + prof["between_jobs_s"]
        self.assertAlmostEqual(sum(j["wall_s"] for j in prof["jobs"]) + outside, prof["total_s"], delta=0.01)
        self.assertAlmostEqual(prof["daemon_start_s"], sum(d["start_s"] for d in sweep["daemons"]), delta=0.01)
        self.assert_clean()

    def test_bad_values_are_refused(self):
        for value in ("0", "21", "two", "-1"):
            with self.subTest(value=value):
                self.refused(self.fake_args(rounds=value), "--rounds")


if __name__ == "__main__":
    unittest.main()
