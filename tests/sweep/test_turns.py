"""Turns (harness/sweep/mpsbench_sweep/turns.py, harness/runtime/turns.hpp): a round's modes run at once and take
turns of one repetition of a configuration. The sweep with fake_job.py speaking the protocol, and the real
mpsbench on the CPU device taking turns through a hub (skipped, saying why, when build/mpsbench is missing;
ctest passes MPSBENCH_SWEEP_TEST_MPSBENCH and MPSBENCH_SWEEP_TEST_MPIEXEC). The rule and the hub alone:
test_turn_hub.py.
"""
import json
import os
import shutil
import subprocess
import threading
import time
import unittest

import schema_check
from sweeptest import REPO, SCHEMA, SweepTestCase

from mpsbench_sweep.turns import TurnHub  # noqa: E402


def rotated(names, index):
    """The group's order rotated by sum(index) % n: who goes first among equal asks."""
    first = sum(index) % len(names)
    return names[first:] + names[:first]


def turn_log(path):
    with open(path) as f:
        return [(mode, (int(c), int(s))) for mode, c, s in (line.split() for line in f)]


class SweepTakesTurns(SweepTestCase):
    MODES = ("timeslice", "mps", "streams")

    def test_every_mode_takes_each_step_before_the_next(self):
        log = os.path.join(self.tmp, "turns.log")
        r = self.sweep(self.fake_args(modes=",".join(self.MODES), ranks="1,2", rounds="2", turns="on"),
                       FAKE_JOB_TURN_LOG=log)
        self.assertEqual(r.returncode, 0, r.stderr)
        doc = self.merged()
        self.assertTrue(doc["complete"])
        self.assertEqual(sorted((x["mode"], x["ranks_per_gpu"], x["round"]) for x in doc["results"]),
                         sorted((m, k, n) for m in self.MODES for k in (1, 2) for n in (0, 1)))
        jobs = doc["context"]["sweep"]["jobs"]
        groups = {}
        for index, j in enumerate(jobs):
            self.assertEqual(j["status"], "ok", j)
            groups.setdefault(j["turn_group"], []).append(index)
            self.assertEqual(j["turns"]["problem"], None, j)
            # The fake's turns: the opening, 2 configurations x 2 steps, the final report.
            self.assertEqual(j["turns"]["turns"], 6, j)
        self.assertEqual(len(groups), 2)
        for number, indices in groups.items():
            self.assertEqual({jobs[i]["round"] for i in indices}, {number}, "one group per round")
            self.assertEqual(sorted(jobs[i]["mode"] for i in indices), sorted(self.MODES))
            self.assertTrue(all(jobs[i]["turns"]["group"] == indices for i in indices))
        # each record says its job's turn group (merge.relabel), which pairs its MPS gain by repetition
        group_of = {(j["mode"], j["round"]): j["turn_group"] for j in jobs}
        self.assertEqual([x["turn_group"] for x in doc["results"]],
                         [group_of[(x["mode"], x["round"])] for x in doc["results"]])
        self.assertEqual([e["interval"].get("pairing") for e in doc["context"]["sweep"]["gains"]], ["repetition"] * 2)
        with open(SCHEMA) as f:  # merged() validated the groups written; the schema takes no negative one
            self.assertTrue(any(".turn_group" in e for e in schema_check.validate(
                dict(doc, results=[dict(doc["results"][0], turn_group=-1)]), json.load(f))))
        turns = turn_log(log)
        per_round = len(self.MODES) * 6
        self.assertEqual(len(turns), 2 * per_round, turns)
        steps = [(-1, 0), (0, 0), (0, 1), (1, 0), (1, 1), (2, 0)]
        for n in range(2):  # the groups run one after the other
            block = turns[n * per_round:(n + 1) * per_round]
            indices = [index for _, index in block]
            self.assertEqual(indices, sorted(indices), f"round {n}: a step began before every mode took the one "
                                                       f"before: {block}")
            for index in steps:
                self.assertEqual(sorted(m for m, i in block if i == index), sorted(self.MODES), (n, index, block))
            firsts = {next(m for m, i in block if i == index) for index in steps}
            self.assertEqual(firsts, set(self.MODES), f"round {n}: each mode goes first at some step: {block}")
        self.assert_clean()

    def test_a_crashed_job_stops_the_sweep_after_the_others_finish(self):
        r = self.sweep(self.fake_args(modes=",".join(self.MODES), ranks="1,2", turns="on"), FAKE_JOB_CRASH="mps",
                       FAKE_MPS_SPAWN_SERVER="1")
        self.assertEqual(r.returncode, 3, r.stderr)  # as one job after the other (test_lifecycle.JobFailures)
        self.assertIn("mps: the job exited with status 134", r.stderr)
        doc = self.merged()
        self.assertFalse(doc["complete"])
        jobs = doc["context"]["sweep"]["jobs"]
        self.assertEqual({j["mode"]: (j["status"], j["exit_code"]) for j in jobs},
                         {"timeslice": ("ok", 0), "mps": ("failed", 134), "streams": ("ok", 0)})
        self.assertEqual({j["turn_group"] for j in jobs}, {0})
        by_mode = {j["mode"]: j for j in jobs}
        self.assertEqual(by_mode["mps"]["turns"]["turns"], 0)
        self.assertEqual(sorted((x["mode"], x["ranks_per_gpu"]) for x in doc["results"]),
                         [("streams", 1), ("streams", 2), ("timeslice", 1), ("timeslice", 2)])
        (daemon,) = doc["context"]["sweep"]["daemons"]
        self.assertTrue(daemon["stop"][0]["exited_after_quit"])
        self.assert_clean()


class RealMpsbenchTakesTurns(SweepTestCase):
    """Two real mpsbench jobs (mode streams, CPU device) through a TurnHub of the test's own."""

    def setUp(self):
        super().setUp()
        self.mpsbench = os.environ.get("MPSBENCH_SWEEP_TEST_MPSBENCH") or os.path.join(REPO, "build", "mpsbench")
        self.mpiexec = os.environ.get("MPSBENCH_SWEEP_TEST_MPIEXEC") or shutil.which("mpirun")
        if "MPSBENCH_SWEEP_TEST_MPSBENCH" not in os.environ and not os.path.isfile(self.mpsbench):
            self.skipTest(f"{self.mpsbench} is not built")
        self.assertTrue(self.mpiexec and os.path.isfile(self.mpiexec), f"no MPI launcher ({self.mpiexec})")
        self.env.update({"OMPI_ALLOW_RUN_AS_ROOT": "1", "OMPI_ALLOW_RUN_AS_ROOT_CONFIRM": "1"})

    def command(self, np, output, turns):
        return [self.mpiexec, "--oversubscribe", "-np", str(np), self.mpsbench, "--device", "cpu", "--mode",
                "streams", "--kernel", "matmul", "--size", "24", "--precision", "fp32", "--ranks-per-gpu", "1,2",
                "--min-time", "0.01", "--warmup-time", "0.02", "--repetitions", "2", "--one-rank-repetitions", "3",
                "--output", output, "--turns", turns]

    def test_two_jobs_take_turns_of_each_repetition(self):
        # A scripted NVML that watches the CPU device as a GPU: outside turns each job would have its monitor.
        nvml = os.path.join(self.tmp, "nvml.json")
        with open(nvml, "w") as f:
            json.dump({"gpus": [{"uuid": "GPU-fake-0", "power_w": 250, "tick_s": 0.05, "call_s": 0.002}],
                       "cpu_device_as": "GPU-fake-0"}, f)
        self.env["MPSBENCH_FAKE_NVML"] = nvml
        hub = TurnHub([0, 1])
        outputs = {n: os.path.join(self.tmp, f"job{n}.json") for n in (0, 1)}
        procs, outs, threads = {}, {}, []

        def wait(n):
            try:
                outs[n] = procs[n].communicate(timeout=120)[0]
            except subprocess.TimeoutExpired:
                procs[n].kill()
                outs[n] = procs[n].communicate()[0] + "\n(killed after 120 s)"
            finally:
                hub.end(n)  # as the sweep does when it sees a job's process end

        try:
            for n, np in ((0, 2), (1, 1)):
                procs[n] = subprocess.Popen(self.command(np, outputs[n], hub.path(n)), env=self.env, cwd=self.tmp,
                                            stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                                            stderr=subprocess.STDOUT, text=True)
                threads.append(threading.Thread(target=wait, args=(n,), daemon=True))
                threads[-1].start()
            for t in threads:
                t.join(150)
        finally:
            for p in procs.values():
                if p.poll() is None:
                    p.kill()
            directory = hub.dir
            hub.close()
        self.assertFalse(os.path.exists(directory))
        for n in (0, 1):
            self.assertEqual(procs[n].returncode, 0, outs.get(n))
            with open(outputs[n]) as f:
                doc = json.load(f)
            self.assertEqual(len(doc["results"]), 2, n)
            self.assertTrue(doc["complete"])
            # --one-rank-repetitions: 3 at one rank per GPU (configuration 0), --repetitions (2) at two
            self.assertEqual([(r["ranks_per_gpu"], r["repetitions"]) for r in doc["results"]], [(1, 3), (2, 2)])
            for r in doc["results"]:  # no GPU monitor in turns (its reads disturbed the windows), and why
                self.assertFalse(r["energy"]["available"])
                self.assertIn("no GPU monitor in mpsbench-sweep's turns", r["energy"]["reason"])
        log = hub.order.log
        self.assertEqual(hub.problems, {})
        self.assertEqual(sorted(log[:2]), [(0, (-1, 0)), (1, (-1, 0))], log)
        for n in (0, 1):  # a turn per repetition: three of configuration 0, two of configuration 1
            self.assertEqual(sorted(i for m, i in log if m == n and i[0] in (0, 1)),
                             [(0, 0), (0, 1), (0, 2), (1, 0), (1, 1)], log)
        indices = [index for _, index in log]
        self.assertEqual(indices, sorted(indices), f"a job went on before the other took the same step: {log}")
        for index in set(indices):
            self.assertEqual(sorted(n for n, i in log if i == index), [0, 1], log)
        self.assert_clean()

    def test_turns_nobody_listens_on_is_fatal(self):
        path = os.path.join(self.tmp, "nobody.sock")
        r = subprocess.run(self.command(1, os.path.join(self.tmp, "out.json"), path), env=self.env, cwd=self.tmp,
                           stdin=subprocess.DEVNULL, capture_output=True, text=True, timeout=120)
        self.assertNotEqual(r.returncode, 0, r.stdout + r.stderr)
        self.assertTrue(any("--turns" in line and path in line for line in (r.stdout + r.stderr).splitlines()),
                        r.stdout + r.stderr)
        self.assertFalse(os.path.exists(os.path.join(self.tmp, "out.json")))
        self.assert_clean()


if __name__ == "__main__":
    unittest.main()
