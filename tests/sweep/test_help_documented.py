"""Every option `harness/mpsbench-sweep --help` lists states its default there and is documented in the README.

The options are read from the real --help output (argparse's options section),
so an option added to cli.py without a default in its help text or without a
line in harness/sweep/README.md fails here.
"""
import os
import re
import subprocess
import sys
import unittest

from sweeptest import REPO, SWEEP

README = os.path.join(REPO, "harness", "sweep", "README.md")
# "  --modes LIST   ..." or "  -h, --help   ...": an entry's first line; its help may continue below.
ENTRY = re.compile(r"^  (?:-[a-zA-Z], )?(--[a-z][a-z0-9-]*)")
SECTIONS = ("options:", "optional arguments:")  # Python >= 3.10, older


def help_entries(text):
    """{flag: the entry's whole text} for the options sections of argparse's --help output: the main one and
    each argument group after it (a title line ending in ':'), up to the epilog."""
    entries, current, inside, started = {}, None, False, False
    for line in text.splitlines():
        if line.strip() in SECTIONS and not line.startswith(" "):
            inside, started, current = True, True, None
            continue
        if started and line.endswith(":") and not line.startswith(" "):
            inside, current = True, None  # an argument group's title
            continue
        if not inside:
            continue
        if not line.strip() or not line.startswith(" "):
            inside = False  # a section ends at its blank line (another group or the epilog follows)
            continue
        match = ENTRY.match(line)
        if match:
            current = match.group(1)
            entries[current] = line.strip()
        elif current is not None:
            entries[current] += " " + line.strip()
    return entries


def undocumented(flags, readme):
    """Flags that the README never shows as code (`--flag`, not as the prefix of a longer flag)."""
    return [f for f in flags if not re.search("`" + re.escape(f) + r"(?![a-z0-9-])", readme)]


def without_default(entries):
    return [f for f, text in entries.items() if f != "--help" and "(default:" not in text]


class HelpIsDocumented(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        env = dict(os.environ, COLUMNS="100")  # argparse wraps to the terminal width: keep it fixed
        run = subprocess.run([sys.executable, SWEEP, "--help"], capture_output=True, text=True, env=env,
                             timeout=60)
        assert run.returncode == 0, run.stderr
        cls.help = run.stdout
        cls.entries = help_entries(cls.help)
        with open(README, encoding="utf-8") as f:
            cls.readme = f.read()

    def test_the_options_section_was_found(self):
        # A parsing failure must not pass as "nothing undocumented".
        for flag in ("--help", "--modes", "--ranks-per-gpu", "--timeout", "--keep-parts"):
            self.assertIn(flag, self.entries, f"--help output not understood:\n{self.help}")
        self.assertGreaterEqual(len(self.entries), 19)

    def test_every_option_states_its_default(self):
        self.assertEqual(without_default(self.entries), [], "--help entries without '(default: ...)'")

    def test_every_option_is_in_the_readme(self):
        self.assertEqual(undocumented(self.entries, self.readme), [],
                         "options of mpsbench-sweep --help missing from harness/sweep/README.md")

    def test_the_checks_detect_what_they_should(self):
        text = ("usage: x\n\noptions:\n  -h, --help  show\n  --alpha A   first (default: 1)\n"
                "  --beta-long B\n              second, wrapped (default:\n              2)\n"
                "  --gamma     no default here\n\nexit status: --not-an-option\n")
        entries = help_entries(text)
        self.assertEqual(list(entries), ["--help", "--alpha", "--beta-long", "--gamma"])
        self.assertEqual(without_default(entries), ["--gamma"])
        self.assertEqual(undocumented(entries, "`-h`, `--help`, `--alpha A`, `--beta-long-name`"),
                         ["--beta-long", "--gamma"])


if __name__ == "__main__":
    unittest.main()
