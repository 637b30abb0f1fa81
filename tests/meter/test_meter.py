"""mpsbench-meter's protocol (harness/mpsbench_meter.cpp) under a scripted NVML (MPSBENCH_FAKE_NVML):
the ready line, a span's energy and GPM activity against the fake's known power and figures, the
error lines, the refusals, and the end of input. Standard library only; MPSBENCH_METER names the
program."""
import json
import os
import subprocess
import tempfile
import time
import unittest

METER = os.environ.get("MPSBENCH_METER", "mpsbench-meter")

FAKE = {
    "gpus": [
        {"uuid": "GPU-fake-0", "power_w": 250, "tick_s": 0.05, "call_s": 0.002,
         "gpm": {"sm_active": 80, "sm_occupancy": 40, "dram_bw": 30, "tensor_active": 10}},
        {"uuid": "GPU-fake-1", "power_w": 100, "tick_s": 0.05, "call_s": 0.002, "gpm": "not_supported"},
        {"uuid": "GPU-fake-2", "energy": "no_permission"},
    ]
}


class Meter:
    def __init__(self, *args, fake=FAKE):
        self.dir = tempfile.TemporaryDirectory()
        env = dict(os.environ)
        env.pop("MPSBENCH_FAKE_NVML", None)
        if fake is not None:
            path = os.path.join(self.dir.name, "fake.json")
            with open(path, "w", encoding="utf-8") as f:
                json.dump(fake, f)
            env["MPSBENCH_FAKE_NVML"] = path
        # Arguments and input pass bytes that are not UTF-8 as surrogates (os.fsencode's and surrogateescape).
        self.proc = subprocess.Popen([METER, *args], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                     stderr=subprocess.PIPE, encoding="utf-8", errors="surrogateescape",
                                     env=env)

    def line(self):
        return json.loads(self.proc.stdout.readline())

    def send(self, command):
        self.proc.stdin.write(command + "\n")
        self.proc.stdin.flush()

    def close(self):
        self.proc.stdin.close()
        code = self.proc.wait(timeout=30)
        self.proc.stdout.close()
        self.proc.stderr.close()
        self.dir.cleanup()
        return code


class MeterProtocol(unittest.TestCase):
    def test_a_span_meters_every_gpu(self):
        m = Meter("--gpus", "GPU-fake-0,GPU-fake-1")
        ready = m.line()
        self.assertEqual(ready, {"ready": True, "gpus": [{"index": 0, "uuid": "GPU-fake-0"},
                                                         {"index": 1, "uuid": "GPU-fake-1"}]})
        m.send("start")
        time.sleep(0.6)
        m.send("stop")
        span = m.line()
        self.assertGreater(span["span_s"], 0.55)
        gpus = {g["uuid"]: g for g in span["gpus"]}
        for uuid, watts in (("GPU-fake-0", 250), ("GPU-fake-1", 100)):
            e = gpus[uuid]["energy"]
            self.assertTrue(e["available"], e)
            self.assertLessEqual(abs(e["mean_power_w"] - watts), watts * e["uncertainty"] + 1e-9, e)
            self.assertAlmostEqual(e["joules"], e["mean_power_w"] * span["span_s"], places=6)
            self.assertIn("nvml_energy_counter", e["method"])
        total = span["energy"]
        self.assertTrue(total["available"])
        self.assertAlmostEqual(total["joules"], sum(g["energy"]["joules"] for g in span["gpus"]), places=6)
        self.assertAlmostEqual(total["mean_power_w"], sum(g["energy"]["mean_power_w"] for g in span["gpus"]),
                               places=6)
        a0 = gpus["GPU-fake-0"]["gpu_activity"]
        self.assertEqual((a0["available"], a0["sm_active"], a0["sm_occupancy"], a0["dram_bw"], a0["tensor_active"]),
                         (True, 80, 40, 30, 10))
        a1 = gpus["GPU-fake-1"]["gpu_activity"]
        self.assertFalse(a1["available"])
        self.assertIn("Not Supported", a1["reason"])
        self.assertNotIn("sm_active", a1)  # never a zero
        self.assertFalse(span["gpu_activity"]["available"])
        self.assertIn("GPU-fake-1", span["gpu_activity"]["reason"])
        # A second span, then the errors, then the end of input.
        m.send("start")
        m.send("stop")
        short = m.line()
        self.assertFalse(short["energy"]["available"])
        self.assertIn("--energy-min-span", short["gpus"][0]["energy"]["reason"])
        self.assertFalse(short["gpus"][0]["gpu_activity"]["available"])
        m.send("stop")
        self.assertIn("stop without a span", m.line()["error"])
        m.send("bogus")
        self.assertIn("unknown command 'bogus'", m.line()["error"])
        m.send("start")  # an open span at the end of input is dropped
        self.assertEqual(m.close(), 0)

    def test_a_span_ended_before_the_stop(self):
        """stop AGO: the span ends AGO seconds before the command (the farmer's last counter line), its energy
        is the mean power times that shorter span; a bad AGO is an error line and the span stays open."""
        m = Meter("--gpus", "GPU-fake-0")
        self.assertTrue(m.line()["ready"])
        m.send("start")
        time.sleep(0.5)
        for bad, why in (("-1", "the span ends before this command by 0 to less than"), ("nan", "not a number"),
                         ("inf", "not a number"), ("99", "the span ends before this command by 0 to less than"),
                         ("0.2s", "not a number")):
            m.send(f"stop {bad}")
            self.assertIn(f"stop '{bad}': {why}", m.line()["error"])
        m.send("stop 0.25")
        span = m.line()
        self.assertGreater(span["span_s"], 0.24)
        self.assertLess(span["span_s"], 0.5 - 0.2)  # 0.25 s cut from a span of at least 0.5 s
        e = span["gpus"][0]["energy"]
        self.assertTrue(e["available"], e)
        self.assertLessEqual(abs(e["mean_power_w"] - 250), 250 * e["uncertainty"] + 1e-9, e)
        self.assertAlmostEqual(e["joules"], e["mean_power_w"] * span["span_s"], places=6)
        m.send("stop")
        self.assertIn("stop without a span", m.line()["error"])
        self.assertEqual(m.close(), 0)

    def test_every_listed_gpu_by_default_and_a_gpu_without_energy(self):
        m = Meter()
        self.assertEqual([g["uuid"] for g in m.line()["gpus"]], ["GPU-fake-0", "GPU-fake-1", "GPU-fake-2"])
        m.send("start")
        time.sleep(0.3)
        m.send("stop")
        span = m.line()
        e2 = span["gpus"][2]["energy"]
        self.assertEqual(e2, {"available": False,
                              "reason": "nvmlDeviceGetTotalEnergyConsumption: Insufficient Permissions (4)"})
        self.assertFalse(span["energy"]["available"])
        self.assertIn("GPU-fake-2", span["energy"]["reason"])
        self.assertEqual(m.close(), 0)

    def test_refusals_exit_2_with_one_line(self):
        m = Meter("--gpus", "GPU-nowhere")
        line = m.line()
        self.assertEqual(line["ready"], False)
        self.assertIn("GPU-nowhere", line["reason"])
        self.assertEqual(m.close(), 2)
        m = Meter("--bogus")
        self.assertFalse(m.line()["ready"])
        self.assertEqual(m.close(), 2)

    def test_without_the_fake_it_reads_nvml_or_says_why_not(self):
        m = Meter(fake=None)
        line = m.line()
        if line["ready"]:  # a GPU machine: every GPU NVML lists
            self.assertTrue(line["gpus"])
            self.assertEqual(m.close(), 0)
        else:
            self.assertTrue(line["reason"])
            self.assertEqual(m.close(), 2)

    # Issue 36: nothing the meter is given makes it abort (a string that is not UTF-8 in JSON threw in
    # nlohmann's dump: SIGABRT), and every line it writes is ASCII JSON.
    def raw_lines(self, m):
        """The rest of the meter's output (after its input ends), each line checked ASCII and JSON."""
        m.proc.stdin.close()
        out = m.proc.stdout.read()
        self.assertEqual(m.proc.wait(timeout=30), 0)
        lines = out.splitlines()
        for line in lines:
            self.assertTrue(line.isascii(), line)
        return [json.loads(line) for line in lines]

    def test_bytes_that_are_not_utf8_anywhere_give_one_line_never_an_abort(self):
        for args in (["--\udcff"], ["--gpus", "GPU-\udcfe"], ["--gpus=\udcff,GPU-fake-0"]):
            m = Meter(*args)
            line = m.line()
            self.assertEqual(line["ready"], False, args)
            self.assertIn("\ufffd", line["reason"])
            self.assertEqual(m.close(), 2, args)  # not -6 (SIGABRT)
        m = Meter("--gpus", "GPU-fake-0")
        self.assertTrue(m.line()["ready"])
        m.proc.stdin.write("st\udcffart\n\x00\n" + "x" * 100000 + "\nstart\n")
        errors = self.raw_lines(m)
        self.assertEqual(errors[0], {"error": "unknown command 'st\ufffdart' (start or stop)"})
        self.assertEqual(errors[1], {"error": "unknown command '\x00' (start or stop)"})
        self.assertEqual(errors[2], {"error": "a line longer than 4096 bytes (start or stop)"})
        self.assertEqual(len(errors), 3)
        self.assertEqual(m.close(), 0)

    def test_an_empty_gpu_list_is_refused_not_taken_for_every_gpu(self):
        for args in (["--gpus", ""], ["--gpus=,"]):
            m = Meter(*args)
            self.assertEqual(m.line(), {"ready": False, "reason": "--gpus names no GPU"})
            self.assertEqual(m.close(), 2)

    def test_a_broken_gpm_counter_is_unavailable_with_its_values(self):
        # The fake's reads take 0.12 s: the two GPM samples lie 0.1 s apart without the test waiting.
        fake = {"gpus": [{"uuid": "GPU-broken", "call_s": 0.12,
                          "gpm": {"sm_active": 250, "sm_occupancy": 40, "dram_bw": -3, "tensor_active": 10}}]}
        m = Meter(fake=fake)
        self.assertTrue(m.line()["ready"])
        m.send("start")
        m.send("stop")
        span = m.line()
        activity = span["gpus"][0]["gpu_activity"]
        self.assertEqual(activity, {"available": False, "reason": "GPM gave SM active 250%, DRAM bandwidth -3%, "
                                    "outside 0-100%: a broken counter, so no figure of these samples is used"})
        self.assertEqual(span["gpu_activity"], {"available": False, "reason": "GPU-broken: " + activity["reason"]})
        self.assertEqual(m.close(), 0)

    def test_help_names_the_protocol(self):
        out = subprocess.run([METER, "--help"], capture_output=True, text=True, check=True).stdout
        for word in ("start", "stop", "ready", "--gpus", "available"):
            self.assertIn(word, out)


if __name__ == "__main__":
    unittest.main()
