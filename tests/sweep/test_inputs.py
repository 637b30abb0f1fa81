"""Hostile input: every value the sweep reads gives one escaped line and exit status 2, never a traceback.

Numbers are ASCII decimal (Python's int() and isdigit() take "²", "３", "٣"); names a user gives become
printable text; what the engine refuses, the sweep refuses before it starts anything (issue 25).
"""
import os
import unittest

from sweeptest import OneLine, SweepTestCase
from test_app import FAKE_APP, AppTestCase

UNICODE_DIGITS = ("\u00b2", "\uff13", "\u0663", "1\u00b2")  # superscript two, full-width 3, Arabic-Indic 3


class AsciiDecimalOnly(OneLine, SweepTestCase):
    def test_unicode_digits_in_every_list_and_count(self):
        for digit in UNICODE_DIGITS:
            for args in (self.fake_args(ranks=f"1,{digit}"),
                         self.fake_args("--qos-percentages", f"50,{digit}", modes="mps-qos"),
                         self.fake_args("--gpus-per-node", digit),
                         self.fake_args("--nodes", digit),
                         self.fake_args("--mps-client-limit", digit),
                         self.fake_args("--timeout", digit),
                         self.fake_args("--mps-ready-timeout", digit),
                         self.fake_args("--gain-threshold", digit),
                         self.fake_args("--", "--gpus", f"0,{digit}"),
                         [a for a in self.fake_args(modes="timeslice,mps") if a not in ("--ranks-per-gpu", "1,2,4")]
                         + ["--", "--mix", f"matmul:1,inference:{digit}"]):
                with self.subTest(args=args[-3:], digit=digit):
                    self.refused(args)

    def test_slurm_nnodes(self):
        for digit in UNICODE_DIGITS:
            with self.subTest(digit=digit):
                self.refused(self.fake_args(), "SLURM_NNODES", SLURM_JOB_ID="1", SLURM_NNODES=digit)

    def test_numbers_that_are_not_finite_or_plain(self):
        for value in ("nan", "inf", "1e400", "-1", "+3", "1_0", " 3", "0x10"):
            with self.subTest(value=value):
                self.refused(self.fake_args("--timeout", value))

    def test_a_memory_limit_with_a_kelvin_sign(self):
        self.refused(self.fake_args("--mem-limits", "2\u212a", modes="mps-mem"), "--mem-limits")


class Names(OneLine, AppTestCase):
    def test_an_app_name_with_control_characters_is_refused(self):
        for name in ("red\x1b[31m", "two\nlines", "", "bidi\u202eevil", "x" * 201):
            with self.subTest(name=name):
                self.refused(self.cpu_args("sleep 0.1", "--app-name", name), "--app-name")

    def test_a_program_name_with_control_characters_is_printed_escaped(self):
        evil = os.path.join(self.tmp, "evil\x1b]0;owned\x07\nname")
        os.symlink(FAKE_APP, evil)
        r = self.sweep(self.cpu_args(f"'{evil}' --sleep 0.05 --fail-on-run 2 --fail-message '\x1b[2Jcleared'",
                                     ranks="1", min_time="0.3"))
        self.assertEqual(r.returncode, 1, r.stderr)
        for stream in (r.stdout, r.stderr):
            self.assertNotIn("\x1b", stream)
            self.assertNotIn("\x07", stream)
        self.assertIn("evil\\x1b]0;owned\\x07\\nname", r.stdout)  # the verdict line names it, escaped
        self.assertIn("\\x1b[2Jcleared", r.stderr)  # the failed run's stderr, escaped
        name = self.merged()["results"][0]["app"]["name"]
        self.assertTrue(name.isprintable(), name)


if __name__ == "__main__":
    unittest.main()
