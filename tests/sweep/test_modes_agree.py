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


def refs_the_mode_enum(node):
    return node == {"$ref": "#/definitions/mode"} or node.get("$ref") == "#/definitions/mode"


class RegistryAgreesWithTheSchema(unittest.TestCase):
    """The schema holds the modes in one enum, definitions.mode, and every mode field refers to it."""

    def setUp(self):
        self.definitions = schema()["definitions"]

    def test_the_one_enum_is_the_registry(self):
        self.assertEqual(tuple(self.definitions["mode"]["enum"]), modes.NAMES)

    def test_every_mode_field_refers_to_it(self):
        sweep = self.definitions["context"]["properties"]["sweep"]["properties"]
        for where, node in (("result", self.definitions["result"]["properties"]["mode"]),
                            ("app_result", self.definitions["app_result"]["properties"]["mode"]),
                            ("sweep.modes", sweep["modes"]["items"]),
                            ("sweep.jobs[].mode", sweep["jobs"]["items"]["properties"]["mode"])):
            self.assertTrue(refs_the_mode_enum(node), where)
        requested = self.definitions["context"]["properties"]["mode_requested"]["oneOf"]
        self.assertEqual(requested[0], {"const": "auto"})
        self.assertTrue(refs_the_mode_enum(requested[1]))
        text = json.dumps(schema())
        self.assertEqual(text.count('"timeslice"'), 1, "a second list of mode names in the schema")

    def test_defaults_and_kinds_are_sweep_modes(self):
        self.assertTrue(set(modes.DEFAULT_SWEEP_MODES) <= set(modes.SWEEP_MODES))
        for m in modes.MODES:
            if m.sweep:
                self.assertIsNotNone(m.engine_mode, m.name)
                self.assertIn(m.engine_mode, modes.NAMES, m.name)


class RegistryAgreesWithTheEngine(unittest.TestCase):
    """mpsbench --list-modes (the C++ mode table) against the registry: the same engine modes, each an MPS
    client or not and one process or not alike."""

    def test_engine_table_is_the_registry(self):
        mpsbench = os.environ.get("MPSBENCH_SWEEP_TEST_MPSBENCH") or os.path.join(REPO, "build", "mpsbench")
        if not os.path.isfile(mpsbench):
            self.skipTest(f"{mpsbench} is not built")
        run = subprocess.run([mpsbench, "--list-modes"], capture_output=True, text=True, timeout=60)
        self.assertEqual(run.returncode, 0, run.stderr)
        engine = {}
        for line in run.stdout.splitlines():
            fields = line.split()
            flags = dict(f.split("=", 1) for f in fields[1:] if "=" in f)
            engine[fields[0]] = flags
        self.assertIn("auto", engine)
        del engine["auto"]
        ours = {m.engine_mode: m for m in modes.MODES if m.engine_mode == m.name}
        self.assertEqual(set(engine), set(ours))
        for name, flags in engine.items():
            m = ours[name]
            if flags["mps"] != "any":
                self.assertEqual(flags["mps"] == "yes", m.mps, name)
            self.assertEqual(flags["one-process"] == "yes", m.one_process, name)
        for m in modes.MODES:  # a sweep-only mode runs as an engine mode of the same kind
            if m.sweep and m.engine_mode != m.name:
                self.assertEqual(ours[m.engine_mode].mps, m.mps, m.name)


if __name__ == "__main__":
    unittest.main()
