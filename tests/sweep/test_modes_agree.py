"""One sharing-mode registry (core/mpsbench_core/modes.py) and the schema's enums hold the same modes.

Adding a mode is an entry in the registry, one in the C++ table and the schema's enums; the sweep reads
everything else from the registry (plan, probe, table columns, app modes). This test fails when the
registry and the schema (or, where it can list them, the engine) disagree.
"""
import json
import os
import subprocess
import unittest

from sweeptest import REPO, SCHEMA

from mpsbench_core import modes  # noqa: E402


def schema():
    with open(SCHEMA, encoding="utf-8") as f:
        return json.load(f)


class RegistryAgreesWithTheSchema(unittest.TestCase):
    def setUp(self):
        self.definitions = schema()["definitions"]

    def test_every_mode_a_result_may_have(self):
        for record in ("result", "app_result"):
            self.assertEqual(tuple(self.definitions[record]["properties"]["mode"]["enum"]), modes.NAMES, record)

    def test_the_modes_the_sweep_runs(self):
        sweep = self.definitions["context"]["properties"]["sweep"]["properties"]
        self.assertEqual(tuple(sweep["modes"]["items"]["enum"]), modes.SWEEP_MODES)
        self.assertEqual(tuple(sweep["jobs"]["items"]["properties"]["mode"]["enum"]), modes.SWEEP_MODES)

    def test_the_modes_mpsbench_can_be_asked_for(self):
        engine = tuple(dict.fromkeys(m.engine_mode for m in modes.MODES if m.engine_mode))
        self.assertEqual(tuple(self.definitions["context"]["properties"]["mode_requested"]["enum"]),
                         ("auto",) + engine)

    def test_defaults_and_kinds_are_sweep_modes(self):
        self.assertTrue(set(modes.DEFAULT_SWEEP_MODES) <= set(modes.SWEEP_MODES))
        for m in modes.MODES:
            if m.sweep:
                self.assertIsNotNone(m.engine_mode, m.name)
                self.assertIn(m.engine_mode, modes.NAMES, m.name)


class RegistryAgreesWithTheEngine(unittest.TestCase):
    def test_engine_modes_are_listed_by_mpsbench(self):
        mpsbench = os.environ.get("MPSBENCH_SWEEP_TEST_MPSBENCH") or os.path.join(REPO, "build", "mpsbench")
        if not os.path.isfile(mpsbench):
            self.skipTest(f"{mpsbench} is not built")
        run = subprocess.run([mpsbench, "--list-modes"], capture_output=True, text=True, timeout=60)
        if run.returncode != 0:
            self.skipTest("this mpsbench has no --list-modes")
        listed = set(run.stdout.replace(",", " ").split())
        for name in {m.engine_mode for m in modes.MODES if m.sweep}:
            self.assertIn(name, listed, f"mpsbench --list-modes lacks {name}")


if __name__ == "__main__":
    unittest.main()
