"""mpsbench_core.sweep_settings: the settings a sweep records in context.sweep, written and read back."""
import dataclasses
import math
import os
import sys
import unittest

sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))), "core"))
from mpsbench_core.sweep_settings import SweepRecord, recorded_threshold  # noqa: E402
from mpsbench_core.verdict import GAIN_THRESHOLD  # noqa: E402


def record(**changes):
    base = SweepRecord(argv=("mpsbench-sweep", "--modes", "timeslice,mps"), modes=("timeslice", "mps"),
                       ranks_per_gpu=(1, 2), qos_percentages=None, nodes=1, gpus_per_node=2,
                       gpus_per_node_source="nvidia-smi -L", launcher="mpirun (/usr/bin/mpirun)",
                       mpsbench="/opt/mpsbench/bin/mpsbench", mpsbench_options=("--kernel", "matmul"),
                       mps_control="/usr/bin/nvidia-cuda-mps-control", mps_client_limit=48, gain_threshold=1.25)
    return dataclasses.replace(base, **changes)


class SweepRecordRoundTrip(unittest.TestCase):
    def test_written_as_context_sweep_names_it_and_read_back(self):
        r = record(mem_limits=("2G", "8G"), mem_limit_device_ordinals=2)
        out = r.to_json()
        self.assertEqual(out["modes"], ["timeslice", "mps"])
        self.assertEqual(out["gain_threshold"], 1.25)
        self.assertEqual(out["tool"], "mpsbench-sweep")
        self.assertNotIn("app", out)  # optional fields only when set
        self.assertEqual(out["mem_limits"], ["2G", "8G"])
        self.assertEqual(SweepRecord.from_json(out), r)

    def test_frozen_a_new_plan_is_a_new_record(self):
        r = record()
        with self.assertRaises(dataclasses.FrozenInstanceError):
            r.mps_client_limit = 3
        self.assertEqual(dataclasses.replace(r, mps_client_limit=3).mps_client_limit, 3)
        self.assertEqual(r.mps_client_limit, 48)

    def test_lenient_reading_of_older_or_edited_files(self):
        r = SweepRecord.from_json({"modes": ["mps", 3], "ranks_per_gpu": [1, True, "2"], "nodes": "x"})
        self.assertEqual((r.modes, r.ranks_per_gpu, r.nodes, r.gain_threshold), (("mps",), (1,), 1, GAIN_THRESHOLD))


class RecordedThreshold(unittest.TestCase):
    def test_the_runs_threshold_else_the_default(self):
        self.assertEqual(recorded_threshold({"context": {"sweep": record().to_json()}}), 1.25)
        for sweep in (None, {}, {"gain_threshold": None}, {"gain_threshold": -1}, {"gain_threshold": math.inf},
                      {"gain_threshold": True}, {"gain_threshold": "1.5"}):
            self.assertEqual(recorded_threshold({"context": {"sweep": sweep}}), GAIN_THRESHOLD, sweep)
        self.assertEqual(recorded_threshold({}), GAIN_THRESHOLD)
        self.assertEqual(recorded_threshold({"context": []}), GAIN_THRESHOLD)


if __name__ == "__main__":
    unittest.main()
