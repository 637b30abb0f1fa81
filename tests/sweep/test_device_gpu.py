"""--device gpu on a host whose GPUs the probe does not see is bad input, exit status 2, as for mpsbench
(it was a failed configuration, exit 1) (issue 25)."""
import unittest

from sweeptest import OneLine
from test_app import FAKE_APP, AppTestCase


class GpuWithoutGpu(OneLine, AppTestCase):
    def test_device_gpu_without_a_gpu_is_bad_input_as_for_mpsbench(self):
        self.refused(self.gpu_args(f"{FAKE_APP} --sleep 0.05", ranks="1"), "--device gpu", FAKE_PROBE_GPUS="0")

    def test_fewer_gpus_than_asked_for(self):
        self.refused(self.gpu_args(f"{FAKE_APP} --sleep 0.05", ranks="1"), "--gpus-per-node 2", FAKE_PROBE_GPUS="1")


if __name__ == "__main__":
    unittest.main()
