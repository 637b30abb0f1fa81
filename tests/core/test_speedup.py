"""The speedup over one copy (rank) per GPU (core/mpsbench_core/speedup.py)."""
import unittest

import corecase  # noqa: F401  (puts core on the path)
from mpsbench_core.speedup import speedup_vs_one_per_gpu


class Speedup(unittest.TestCase):
    def test_one_copy_per_gpu_is_its_own_reference(self):
        """Issue 36: an application at one copy per GPU had a null speedup against one copy per GPU; it is 1."""
        self.assertEqual(speedup_vs_one_per_gpu(1, 5.0, None), 1.0)
        self.assertEqual(speedup_vs_one_per_gpu(1, 5.0, 4.0), 1.0)  # another round's one-copy figure is not its own

    def test_over_the_one_per_gpu_figure(self):
        self.assertEqual(speedup_vs_one_per_gpu(4, 12.0, 5.0), 2.4)
        self.assertIsNone(speedup_vs_one_per_gpu(4, 12.0, None))  # no one-copy run in this round
        self.assertIsNone(speedup_vs_one_per_gpu(4, 12.0, 0.0))
        self.assertIsNone(speedup_vs_one_per_gpu(1, None, None))  # nothing measured: no speedup
        self.assertIsNone(speedup_vs_one_per_gpu(2, float("nan"), 5.0))


if __name__ == "__main__":
    unittest.main()
