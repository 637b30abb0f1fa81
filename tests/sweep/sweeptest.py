"""Shared helpers of the sweep tests: run the sweep with fakes, find leftovers, clean up.

Every process a test starts (the sweep, guardians, fake daemons and servers,
fake jobs) inherits a unique SWEEP_TEST_TAG, and the sweep's TMPDIR is the
test's temporary directory, so "nothing left behind" is checked exactly: no live
process carries the tag and no mpsb-* directory is left. tearDown kills tagged
processes whatever happened, so a failing test cannot leave daemons around.
"""
import contextlib
import io
import json
import os
import shlex
import shutil
import signal
import subprocess
import sys
import tempfile
import time
import unittest
import uuid
from unittest import mock

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(os.path.dirname(HERE))
SWEEP = os.path.join(REPO, "harness", "mpsbench-sweep")
FAKE_CONTROL = os.path.join(HERE, "fake_mps", "nvidia-cuda-mps-control")
FAKE_JOB = os.path.join(HERE, "fake_job.py")
FAKE_FANOUT = os.path.join(HERE, "fake_fanout.py")
SCHEMA = os.path.join(REPO, "schema", "mpsbench-results.schema.json")
# The sweep's package and the core package it shares with the analysis, as the launcher finds them.
PACKAGE_PATH = [os.path.join(REPO, "harness", "sweep"), os.path.join(REPO, "core")]
sys.path[:0] = [HERE] + [p for p in PACKAGE_PATH if p not in sys.path]
import schema_check  # noqa: E402
from mpsbench_sweep import cli  # noqa: E402
from mpsbench_sweep.lifetime import stop_signals  # noqa: E402


def tagged_pids(tag):
    """Live (non-zombie) processes whose environment holds SWEEP_TEST_TAG=tag."""
    needle = f"SWEEP_TEST_TAG={tag}".encode()
    found = []
    for name in os.listdir("/proc"):
        if not name.isdigit() or int(name) == os.getpid():
            continue
        try:
            with open(f"/proc/{name}/environ", "rb") as f:
                env = f.read().split(b"\0")
            with open(f"/proc/{name}/stat", "rb") as f:
                state = f.read().rsplit(b")", 1)[1].split()[0]
        except (OSError, IndexError):
            continue
        if needle in env and state not in (b"Z", b"X"):
            found.append(int(name))
    return found


def pid_alive(pid):
    try:
        with open(f"/proc/{pid}/stat", "rb") as f:
            return f.read().rsplit(b")", 1)[1].split()[0] not in (b"Z", b"X")
    except (OSError, IndexError):
        return False


class SweepTestCase(unittest.TestCase):
    maxDiff = None

    def setUp(self):
        self.tmp = tempfile.mkdtemp(prefix="swt-")
        self.tag = uuid.uuid4().hex
        self.env = {k: v for k, v in os.environ.items()
                    if not k.startswith(("CUDA_MPS_", "FAKE_", "SLURM_")) and k != "CUDA_VISIBLE_DEVICES"}
        self.env.update({"SWEEP_TEST_TAG": self.tag, "TMPDIR": self.tmp, "FAKE_JOB_CONTROL": FAKE_CONTROL,
                         "FAKE_MPS_MAX_LIFETIME": "120", "PYTHONDONTWRITEBYTECODE": "1"})
        self.output = os.path.join(self.tmp, "out.json")
        self.workdir = os.path.join(self.tmp, "out-work")
        self.env["PATH"] = self.this_python_first()

    def this_python_first(self):
        """PATH with a python3 that is this interpreter in front: the fakes (#!/usr/bin/env python3) start
        hundreds of times per test, and a launcher such as a pyenv shim (a bash script) would double the cost."""
        bindir = os.path.join(self.tmp, "python3-bin")
        os.mkdir(bindir)
        with open(os.path.join(bindir, "python3"), "w") as f:
            f.write(f"#!/bin/sh\nexec {shlex.quote(sys.executable)} \"$@\"\n")
        os.chmod(os.path.join(bindir, "python3"), 0o755)
        return bindir + os.pathsep + self.env.get("PATH", os.defpath)

    def tearDown(self):
        for pid in tagged_pids(self.tag):
            try:
                os.kill(pid, signal.SIGKILL)
            except OSError:
                pass
        shutil.rmtree(self.tmp, ignore_errors=True)

    def fake_args(self, *extra, modes="timeslice,mps,mps-qos,streams", ranks="1,2,4", rounds="1", turns="off"):
        """rounds: one unless a test is about rounds (the sweep's default of two would double every test's time).
        turns: "off" unless a test is about turns (test_turns.py): the tests of the one-job-at-a-time path see the
        jobs one by one, as they ran before turns; None leaves --turns out (the sweep's default, on)."""
        return ["--modes", modes, "--ranks-per-gpu", ranks, "--gpus-per-node", "1",
                "--mpsbench", FAKE_JOB, "--mps-control", FAKE_CONTROL,
                "--launcher", f"{sys.executable} {FAKE_JOB} --np {{np}}", "--output", self.output,
                "--mps-quit-grace", "2", "--mps-ready-timeout", "5", "--rounds", rounds] + (
                    ["--turns", turns] if turns else []) + list(extra)

    def sweep(self, args, timeout=90, **env):
        self.env.update(env)
        return subprocess.run([sys.executable, SWEEP] + args, env=self.env, capture_output=True, text=True,
                              timeout=timeout, cwd=self.tmp)

    def start_sweep(self, args, **env):
        self.env.update(env)
        return subprocess.Popen([sys.executable, SWEEP] + args, env=self.env, stdout=subprocess.PIPE,
                                stderr=subprocess.PIPE, text=True, cwd=self.tmp)

    def wait_for_file(self, path, proc=None, timeout=30):
        deadline = time.monotonic() + timeout
        while not os.path.exists(path):
            if proc is not None and proc.poll() is not None:
                self.fail(f"the sweep exited ({proc.returncode}) before {path} appeared: {proc.stderr.read()}")
            if time.monotonic() > deadline:
                self.fail(f"{path} did not appear within {timeout} s")
            time.sleep(0.05)

    def merged(self):
        """The merged file, validated against the results schema."""
        with open(self.output) as f:
            doc = json.load(f)
        with open(SCHEMA) as f:
            schema = json.load(f)
        self.assertEqual(schema_check.validate(doc, schema), [])
        return doc

    def assert_clean(self):
        """No tagged process is left and no private MPS or empty pipe directory either. A process that was told
        to end may still be exiting: it gets 10 s (a loaded 2-core CI machine), a leaked one stays."""
        deadline = time.monotonic() + 10
        while tagged_pids(self.tag) and time.monotonic() < deadline:
            time.sleep(0.05)
        left = [(pid, open(f"/proc/{pid}/cmdline", "rb").read().replace(b"\0", b" ")) for pid in tagged_pids(self.tag)]
        self.assertEqual(left, [], "processes left behind")
        self.assertEqual([n for n in os.listdir(self.tmp) if n.startswith("mpsb-")], [], "directories left behind")

    def start_foreign_daemon(self, **env):
        """A daemon started outside the sweep (as an administrator would)."""
        pipe = os.path.join(self.tmp, "foreign", "pipe")
        log = os.path.join(self.tmp, "foreign", "log")
        os.makedirs(pipe)
        os.makedirs(log)
        daemon_env = dict(self.env, CUDA_MPS_PIPE_DIRECTORY=pipe, CUDA_MPS_LOG_DIRECTORY=log, **env)
        subprocess.run([FAKE_CONTROL, "-d"], env=daemon_env, check=True, timeout=10)
        for _ in range(100):
            if subprocess.run([FAKE_CONTROL], input="get_server_list\n", env=daemon_env, capture_output=True, text=True,
                              timeout=10).returncode == 0:
                return pipe, daemon_env
            time.sleep(0.05)
        self.fail("the foreign fake daemon did not become ready")

    def foreign_pid(self, pipe):
        with open(os.path.join(pipe, "daemon.pid")) as f:
            return int(f.read())


class OneLine:
    """For a SweepTestCase: an input the sweep must refuse with one line, exit status 2, no traceback and no
    raw control character."""

    def refused(self, args, *expected, **env):
        r = self.sweep(args, **env)
        self.assertEqual(r.returncode, 2, (args, r.stdout, r.stderr))
        self.assertNotIn("Traceback", r.stderr)
        self._one_line(r.stderr, expected)
        return r

    def refused_here(self, args, *expected, **env):
        """refused, in this process: the sweep's own main() with the test's environment and directory, for an
        input refused while the sweep reads its arguments. A process start costs about 0.4 s, and a test of
        every option with every kind of bad digit needs 50 of them. Only the stop signals' handlers are left
        as they are (main() installs them for the process it runs in); an exception fails the test."""
        out, err = io.StringIO(), io.StringIO()
        cwd = os.getcwd()
        os.chdir(self.tmp)
        try:
            with mock.patch.dict(os.environ, dict(self.env, **env), clear=True), \
                    mock.patch.object(stop_signals, "install", lambda *a, **k: (lambda: None)), \
                    contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
                try:
                    code = cli.main(list(args))
                except SystemExit as e:  # argparse's refusals
                    code = e.code
        finally:
            os.chdir(cwd)
        self.assertEqual(code, 2, (args, out.getvalue(), err.getvalue()))
        self._one_line(err.getvalue(), expected)

    def _one_line(self, stderr, expected):
        self.assertEqual(len(stderr.strip().splitlines()), 1, stderr)
        self.assertNotIn("\x1b", stderr)
        for words in expected:
            self.assertIn(words, stderr)
