"""--device gpu on a host whose GPUs the probe does not see is bad input, exit status 2, as for mpsbench
(it was a failed configuration, exit 1) (issue 25)."""
import os
import signal
import time
import unittest

from sweeptest import OneLine, tagged_pids
from test_app import FAKE_APP, FAKE_PROBE, AppTestCase


class GpuWithoutGpu(OneLine, AppTestCase):
    def test_device_gpu_without_a_gpu_is_bad_input_as_for_mpsbench(self):
        self.refused(self.gpu_args(f"{FAKE_APP} --sleep 0.05", ranks="1"), "--device gpu", FAKE_PROBE_GPUS="0")

    def test_fewer_gpus_than_asked_for(self):
        self.refused(self.gpu_args(f"{FAKE_APP} --sleep 0.05", ranks="1"), "--gpus-per-node 2", FAKE_PROBE_GPUS="1")

    def test_interrupted_while_probing(self):
        # SIGINT before the first job (here: a slow probe) ends the sweep as SIGINT does later: one line, 130.
        proc = self.start_sweep(self.gpu_args(f"{FAKE_APP} --sleep 0.05", ranks="1"), FAKE_PROBE_GPUS="2",
                                FAKE_PROBE_SLEEP="30")
        deadline = time.monotonic() + 30
        while not self.probes():
            self.assertIsNone(proc.poll(), proc.stderr.read() if proc.poll() is not None else "")
            self.assertLess(time.monotonic(), deadline, "the probe did not start")
            time.sleep(0.05)
        proc.send_signal(signal.SIGINT)
        out, err = proc.communicate(timeout=60)
        self.assertEqual(proc.returncode, 130, err)
        self.assertNotIn("Traceback", err)
        self.assertEqual(len(err.strip().splitlines()), 1, err)
        self.assertFalse(os.path.exists(self.workdir))

    def probes(self):
        """The fake probe's processes (python3 fake_probe.py)."""
        found = []
        for pid in tagged_pids(self.tag):
            try:
                with open(f"/proc/{pid}/cmdline", "rb") as f:
                    argv = f.read().split(b"\0")
            except OSError:
                continue
            if argv[1:2] == [FAKE_PROBE.encode()]:
                found.append(pid)
        return found


if __name__ == "__main__":
    unittest.main()
