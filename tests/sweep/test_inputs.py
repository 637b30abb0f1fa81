"""Hostile input: every value the sweep reads gives one escaped line and exit status 2, never a traceback.

Numbers are ASCII decimal (Python's int() and isdigit() take "²", "３", "٣"); names a user gives become
printable text; what the engine refuses, the sweep refuses before it starts anything (issue 25).
"""
import contextlib
import io
import os
import sys
import unittest

from sweeptest import OneLine, SweepTestCase
from test_app import FAKE_APP, FAKE_MPIRUN, AppTestCase

from mpsbench_sweep.cli import build_parser  # noqa: E402
from mpsbench_sweep.launcher import Launcher, LauncherError  # noqa: E402

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
                    self.refused_here(args)
        self.refused(self.fake_args(ranks=f"1,{UNICODE_DIGITS[0]}"), "--ranks-per-gpu")  # and as its own process

    def test_slurm_nnodes(self):
        for digit in UNICODE_DIGITS:
            with self.subTest(digit=digit):
                self.refused_here(self.fake_args(), "SLURM_NNODES", SLURM_JOB_ID="1", SLURM_NNODES=digit)

    def test_numbers_that_are_not_finite_or_plain(self):
        for value in ("nan", "inf", "1e400", "-1", "+3", "1_0", " 3", "0x10"):
            with self.subTest(value=value):
                self.refused_here(self.fake_args("--timeout", value))

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


class EmptyValues(OneLine, AppTestCase):
    """An empty value is refused like a blank one, by every option that takes one: never read as the option
    left out (issue 36: --app-check '' ran no check and recorded verified: true)."""

    def test_every_option_that_takes_a_value(self):
        parser = build_parser()
        flags = [a.option_strings[-1] for a in parser._actions if a.option_strings and a.nargs != 0]
        self.assertGreaterEqual(len(flags), 30)
        self.assertLessEqual({"--app-check", "--app-launcher", "--output", "--rounds", "--device"}, set(flags))
        for flag in flags:
            for value in ("", " "):
                with self.subTest(flag=flag, value=value):
                    err = io.StringIO()
                    with contextlib.redirect_stderr(err), self.assertRaises(SystemExit) as exit_:
                        build_parser().parse_args([flag, value])
                    self.assertEqual(exit_.exception.code, 2)
                    self.assertEqual(len(err.getvalue().strip().splitlines()), 1, err.getvalue())
                    self.assertIn(f"argument {flag}: '{value}' is {'blank' if value else 'empty'}", err.getvalue())

    def test_an_empty_check_and_an_empty_launcher_through_the_sweep(self):
        for flag in ("--app-check", "--app-launcher"):
            with self.subTest(flag=flag):
                self.refused(self.cpu_args(f"{FAKE_APP} --sleep 0.05", flag, ""), f"argument {flag}: '' is empty")
        self.assertFalse(os.path.exists(self.output))


class Templates(OneLine, AppTestCase):
    """A launcher template is filled once before anything starts (issue 36: {np:.5} passed the check and ended
    in a traceback when the first configuration started)."""

    def test_a_format_spec_or_conversion_is_refused_naming_the_option(self):
        for flag, spec, node_spec in (("--launcher", "{np:.5}", "auto"), ("--launcher", "{np_per_node:x}", "auto"),
                                      ("--launcher", "{np!r}", "auto"), ("--node-launcher", "{nodes:>3}", None),
                                      ("--launcher", "{np:{nodes}}", "auto")):
            with self.subTest(spec=spec):
                template = f"{sys.executable} -n {spec}"
                with self.assertRaisesRegex(LauncherError, f"^{flag}: '.*' in '.*': a placeholder takes no format"):
                    if node_spec is None:
                        Launcher(f"{sys.executable} -n {{np}}", template)
                    else:
                        Launcher(template, node_spec)
        self.assertEqual(Launcher(f"{sys.executable} -n {{np}}").job_command(["a"], 4, 1, {}),
                         [sys.executable, "-n", "4", "a"])

    def test_an_app_launcher_template_through_the_sweep(self):
        self.refused(self.cpu_args(f"{FAKE_APP} --sleep 0.05", "--app-launcher",
                                   f"{sys.executable} {FAKE_MPIRUN} -np {{np:.5}}"),
                     "--app-launcher: '{np:.5}' in ", "a placeholder takes no format spec or conversion; write {np}")
        self.assertFalse(os.path.exists(self.app_dir + "/copies.log"), "nothing may start")


if __name__ == "__main__":
    unittest.main()
