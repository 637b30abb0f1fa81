"""ctest_entries.py, which splits the sweep's test modules into ctest entries, leaves no test out and runs
none twice: the tests of its entries are exactly those unittest finds in each module."""
import glob
import os
import unittest

from sweeptest import HERE

import ctest_entries  # noqa: E402


class EveryTestInOneEntry(unittest.TestCase):
    def test_the_entries_cover_each_module_exactly(self):
        loader = unittest.TestLoader()

        def ids(suite):
            for t in suite:
                yield from ids(t) if isinstance(t, unittest.TestSuite) else [t.id()]

        paths = sorted(glob.glob(os.path.join(HERE, "test_*.py")))
        self.assertIn(os.path.join(HERE, "test_app.py"), paths)
        for path in paths:
            module = os.path.splitext(os.path.basename(path))[0]
            with self.subTest(module=module):
                whole = sorted(ids(loader.loadTestsFromName(module)))
                split = sorted(i for _, names in ctest_entries.entries(path)
                               for i in ids(loader.loadTestsFromNames(names)))
                self.assertEqual(split, whole)
                self.assertTrue(whole, f"{module} has no test")


if __name__ == "__main__":
    unittest.main()
