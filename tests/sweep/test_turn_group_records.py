"""Each record of a job that took turns says its turn group (merge.relabel), which is what pairs its MPS gain by
repetition (core/mpsbench_core/turn_pairs.py) in the merged file's context.sweep.gains; a job outside turns
writes none, so its gains stay paired by round as in every file written before. In-process: no sweep runs
(test_turns.py runs one)."""
import json
import unittest

import sweeptest
from mpsbench_sweep import merge, plan  # noqa: E402

MODES = ["timeslice", "mps", "streams"]
FACTOR = {"timeslice": 1.0, "mps": 1.5, "mps-qos": 1.25, "streams": 2.0}


def record(mode, k, drift):
    """A matmul record of mode at k whose repetitions move with ``drift`` (the host's, shared by every mode)."""
    samples = [1e12 * FACTOR[mode] * k * x for x in drift]
    return {"kind": "kernel", "kernel": "matmul", "precision": "fp32", "size": 64, "ranks_per_gpu": k, "params": {},
            "mode": mode, "mps_active_thread_percentage": None, "primary_metric": "flop_per_s",
            "primary_unit": "FLOP/s", "status": "ok", "verified": True,
            "aggregate": {"flop_per_s": {"median": sorted(samples)[1], "min": min(samples), "max": max(samples),
                                         "samples": samples}}}


def parts(jobs):
    """Each job's part as the sweep merges it (relabelled), its records those of mpsbench: no round, no group."""
    drift = {0: [1.0, 1.2, 0.9], 1: [1.1, 0.8, 1.0]}
    return [merge.relabel({"schema": merge.SCHEMA, "complete": True, "context": {"tool": "mpsbench"},
                           "results": [record(j.mode, k, drift[j.round]) for k in j.ranks_per_gpu]}, j)
            for j in jobs]


class Relabel(unittest.TestCase):
    def test_every_record_says_its_jobs_turn_group_and_only_a_job_in_a_group_has_one(self):
        # turns on: timeslice and mps take turns, one group per round; mps-qos runs on its own (one job per
        # percentage), so a record without a group sits in the same merged file as records with one
        jobs = plan.with_turns(plan.plan_jobs(["timeslice", "mps", "mps-qos"], [1, 2], None, 1, 1, rounds=2))
        self.assertEqual(sorted({j.turn_group for j in jobs if j.mode != "mps-qos"}), [0, 1])
        for job, part in zip(jobs, parts(jobs)):
            self.assertTrue(part["results"])
            for r in part["results"]:
                self.assertEqual((r["mode"], r["round"], r.get("turn_group", "none")),
                                 (job.mode, job.round, "none" if job.turn_group is None else job.turn_group))
        self.assertEqual({j.turn_group for j in jobs if j.mode == "mps-qos"}, {None})

    def test_turns_off_writes_no_group(self):
        jobs = plan.plan_jobs(MODES, [1, 2], None, 1, 1, rounds=2)
        for job, part in zip(jobs, parts(jobs)):
            self.assertIsNone(job.turn_group)
            for r in part["results"]:
                self.assertNotIn("turn_group", r)
                self.assertEqual(r["round"], job.round)  # what relabel writes of every job


class MergedGains(unittest.TestCase):
    """context.sweep.gains of the merged file, from the relabelled parts (merge.merge: gain_record)."""

    def gains(self, jobs):
        doc = merge.merge(parts(jobs), {"rounds": 2}, True)
        return {e["ranks_per_gpu"]: e["interval"] for e in doc["context"]["sweep"]["gains"]}

    def test_gains_of_jobs_that_took_turns_are_paired_by_repetition_else_by_round(self):
        jobs = plan.plan_jobs(MODES, [1, 2], None, 1, 1, rounds=2)
        in_turns, one_by_one = self.gains(plan.with_turns(jobs)), self.gains(jobs)
        self.assertEqual((sorted(in_turns), sorted(one_by_one)), ([1, 2], [1, 2]))
        for k, interval in in_turns.items():
            self.assertEqual(interval.get("pairing"), "repetition", k)
            # mps is 1.5x timeslice at every repetition: paired, the drift leaves no noise in the floor
            self.assertAlmostEqual(interval["point"], 1.5, delta=1e-12)
            self.assertAlmostEqual(interval["within_se"], 0.0, delta=1e-12)
            # the same records one job after the other: the entry of a file written before turn groups
            self.assertNotIn("pairing", one_by_one[k], k)
            self.assertAlmostEqual(one_by_one[k]["point"], 1.5, delta=1e-12)


class TurnGroupInTheSchema(unittest.TestCase):
    def test_a_turn_group_is_a_whole_number_from_zero(self):
        with open(sweeptest.SCHEMA) as f:
            schema = json.load(f)
        turn_group = schema["definitions"]["result"]["properties"]["turn_group"]
        for value in (0, 3):
            self.assertEqual(sweeptest.schema_check.validate_sub(value, turn_group, schema), [], value)
        for value in (-1, 1.5, True, "0"):
            self.assertNotEqual(sweeptest.schema_check.validate_sub(value, turn_group, schema), [], value)


if __name__ == "__main__":
    unittest.main()
