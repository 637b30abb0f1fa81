"""Removing the run directory of a farmed application mid-window fails that configuration with one line:
no thread traceback, no window cut short and recorded as measured (issue 25)."""
import unittest

from sweeptest import OneLine
from test_app import FAKE_APP, AppTestCase


class RunDirectoryRemoved(OneLine, AppTestCase):
    def test_removing_the_run_directory_mid_window_fails_the_configuration(self):
        r = self.sweep(self.cpu_args(f"{FAKE_APP} --sleep 0.1 --remove-run-dir-on-run 2 --fail-copy 0", "--no-warmup",
                                     ranks="2", min_time="1"))
        self.assertEqual(r.returncode, 1, r.stderr)
        self.assertNotIn("Traceback", r.stderr)
        rec = self.results()[("timeslice", 2)]
        self.assertEqual(rec["status"], "failed")
        self.assertIn("app-runs", rec["error"])
        self.assert_clean()


if __name__ == "__main__":
    unittest.main()
