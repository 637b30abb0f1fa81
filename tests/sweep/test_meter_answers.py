"""The sweep's side of mpsbench-meter's protocol (app/meter.py) checks every field of an answer (issue 36): a
broken counter's figures (SM active 250 %, a negative power) are unavailable with the field and value as the
reason, never recorded as measured (the analysis refuses such a file), and a byte that is not UTF-8 in an
answer does not end the reading. Against tests/sweep/fake_meter.py, scripted to answer so."""
import os
import unittest

from sweeptest import HERE
from test_app import AppTestCase

from mpsbench_sweep.app import meter as meter_module  # noqa: E402

FAKE_METER = os.path.join(HERE, "fake_meter.py")
UUIDS = ["GPU-fake-0", "GPU-fake-1"]


class Answers(unittest.TestCase):
    def span(self, **env):
        """One span of the fake meter with env set: the checked answer."""
        saved = {k: os.environ.get(k) for k in env}
        os.environ.update(env)
        try:
            m = meter_module.Meter(FAKE_METER, UUIDS).open()
        finally:
            for k, v in saved.items():
                if v is None:
                    os.environ.pop(k, None)
                else:
                    os.environ[k] = v
        self.addCleanup(m.close)
        self.assertIsNone(m.reason)
        m.start()
        m.stop()
        return m, m.result("a test span")

    def test_a_sound_answer_is_kept_whole(self):
        _, answer = self.span()
        self.assertTrue(answer["energy"]["available"])
        self.assertEqual(answer["gpu_activity"]["sm_active"], 80.0)
        self.assertEqual([g["gpu_activity"]["available"] for g in answer["gpus"]], [True, True])

    def test_activity_outside_0_100_is_unavailable_with_the_value(self):
        _, answer = self.span(FAKE_METER_SM_ACTIVE="250")
        self.assertEqual(answer["gpu_activity"], {
            "available": False,
            "reason": "mpsbench-meter's answer: sm_active 250.0 is not a percentage (0-100)"})
        for g in answer["gpus"]:
            self.assertFalse(g["gpu_activity"]["available"])
            self.assertNotIn("sm_active", g["gpu_activity"])
        self.assertTrue(answer["energy"]["available"], "the energy of the same span is sound")

    def test_a_negative_power_is_unavailable(self):
        _, answer = self.span(FAKE_METER_POWER_W="-250")
        self.assertFalse(answer["energy"]["available"])
        self.assertIn("joules", answer["energy"]["reason"])
        self.assertNotIn("joules", answer["energy"])
        self.assertTrue(answer["gpu_activity"]["available"])

    def test_a_byte_that_is_not_utf8_is_replaced_and_reading_goes_on(self):
        m, answer = self.span(FAKE_METER_RAW_BYTE="1")
        self.assertEqual(answer["energy"]["method"], "fake \ufffd counter")
        m.start()
        m.stop()
        self.assertTrue(m.result("a second span")["energy"]["available"], "the reader still reads")

    def test_answers_that_are_not_the_protocol(self):
        self.assertEqual(meter_module.checked({"error": "unknown command 'x'"}),
                         {"unavailable": "mpsbench-meter: unknown command 'x'"})
        self.assertIn("unavailable", meter_module.checked({"span_s": 1.0}))
        self.assertIn("unavailable", meter_module.checked({"span_s": float("nan"), "gpus": []}))
        sound = {"available": True, "sm_active": 50.0}
        for broken, words in (({"available": "yes"}, "available true or false"),
                              ({"available": False}, "no reason"),
                              ({"available": True}, "no figure"),
                              ({"available": True, "sm_active": -0.5}, "sm_active -0.5"),
                              ({"available": True, "dram_bw": True}, "dram_bw True"),
                              ([1, 2], "not an object")):
            none = {"available": False, "reason": "none here"}
            answer = meter_module.checked({"span_s": 1.0, "energy": none, "gpu_activity": sound,
                                           "gpus": [{"uuid": "GPU-x", "energy": none, "gpu_activity": broken}]})
            self.assertFalse(answer["gpu_activity"]["available"], broken)
            self.assertIn("GPU-x: ", answer["gpu_activity"]["reason"])
            self.assertIn(words, answer["gpus"][0]["gpu_activity"]["reason"])
            self.assertEqual(answer["energy"], none, "a reason given is kept")


class BrokenCounterInTheRecord(AppTestCase):
    def test_the_sweep_records_no_activity_from_a_broken_counter(self):
        r = self.sweep(self.gpu_args(f"{os.path.join(HERE, 'fake_app.py')} --sleep 0.05", "--meter", FAKE_METER,
                                     "--repetitions", "1", "--no-warmup", ranks="1", min_time="0.3"),
                       FAKE_PROBE_GPUS="2", FAKE_METER_SM_ACTIVE="250", FAKE_METER_RAW_BYTE="1")
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertNotIn("Traceback", r.stderr)
        rec = self.results()[("timeslice", 1)]
        self.assertFalse(rec["gpu_activity"]["available"])
        self.assertIn("sm_active 250.0 is not a percentage", rec["gpu_activity"]["reason"])
        self.assertTrue(rec["energy"]["available"])
        self.assert_clean()


if __name__ == "__main__":
    unittest.main()
