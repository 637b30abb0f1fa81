"""The MPS daemons the sweep finds or runs beyond one node: a daemon it did not start (refused, or used and
left running), one guardian per node, and the guardian's cleanup of an orphaned daemon (fakes only)."""
import json
import os
import subprocess
import sys
import time
import unittest

from sweeptest import FAKE_CONTROL, FAKE_FANOUT, FAKE_JOB, PACKAGE_PATH, SweepTestCase, pid_alive


class ExistingDaemon(SweepTestCase):
    def test_refused_and_left_alone(self):
        pipe, daemon_env = self.start_foreign_daemon()
        pid = self.foreign_pid(pipe)
        try:
            r = self.sweep(self.fake_args(modes="timeslice,mps"))
            self.assertEqual(r.returncode, 2, r.stderr)
            self.assertIn(f"daemon pid {pid} (pipe directory {pipe})", r.stderr)
            self.assertIn("it is left alone", r.stderr)
            self.assertTrue(pid_alive(pid), "the sweep must not kill a daemon it did not start")
            self.assertFalse(os.path.exists(self.output), "nothing ran")
        finally:
            self.stop_foreign(daemon_env, pid)
        self.assert_clean()

    def test_used_recorded_and_not_stopped(self):
        pipe, daemon_env = self.start_foreign_daemon()
        pid = self.foreign_pid(pipe)
        try:
            r = self.sweep(self.fake_args("--existing-daemon", "use", modes="timeslice,mps,mps-qos", ranks="1,2"))
            self.assertEqual(r.returncode, 0, r.stderr)
            self.assertTrue(pid_alive(pid))
            sweep = self.merged()["context"]["sweep"]
            self.assertTrue(sweep["existing_daemon"]["used"])
            self.assertEqual(sweep["existing_daemon"]["pipe_dir"], pipe)
            for job in sweep["jobs"][1:]:
                self.assertEqual(job["daemon"]["started_by_sweep"], False)
                self.assertEqual(job["daemon"]["pipe_dir"], pipe)
            self.assertEqual([d["started_by_sweep"] for d in sweep["daemons"]], [False, False])
        finally:
            self.stop_foreign(daemon_env, pid)
        self.assert_clean()

    def stop_foreign(self, env, pid):
        subprocess.run([FAKE_CONTROL], input="quit\n", env=env, capture_output=True, text=True, timeout=10)
        deadline = time.monotonic() + 10
        while pid_alive(pid) and time.monotonic() < deadline:
            time.sleep(0.05)
        self.assertFalse(pid_alive(pid))


class MultiNode(SweepTestCase):
    """--nodes 2: one guardian (and daemon) per node, reached through a fan-out like srun --input=all."""

    def args(self, *extra):
        args = self.fake_args("--nodes", "2", "--node-launcher", f"{sys.executable} {FAKE_FANOUT} {{nodes}}",
                              *extra, modes="timeslice,mps", ranks="1,2")
        args[args.index("--launcher") + 1] = f"{sys.executable} {FAKE_JOB} --np {{np_per_node}}"
        return args

    def test_one_daemon_per_node(self):
        r = self.sweep(self.args(), FAKE_MPS_SPAWN_SERVER="1")
        self.assertEqual(r.returncode, 0, r.stderr)
        sweep = self.merged()["context"]["sweep"]
        self.assertEqual([j["np"] for j in sweep["jobs"]], [4, 4])
        (daemon,) = sweep["daemons"]
        self.assertEqual(len(daemon["hosts"]), 2)
        self.assertEqual(len(daemon["stop"]), 2)
        self.assertTrue(all(s["exited_after_quit"] and s["dirs_removed"] for s in daemon["stop"]), daemon["stop"])
        self.assert_clean()

    def test_one_node_fails_to_start_the_other_is_stopped(self):
        r = self.sweep(self.args(), FAKE_FANOUT_FAIL_NODE="1", FAKE_MPS_SPAWN_SERVER="1")
        self.assertEqual(r.returncode, 3, r.stderr)
        self.assertIn("FAKE_MPS_FAIL_START", r.stderr)
        (daemon,) = self.merged()["context"]["sweep"]["daemons"]
        self.assertEqual(len(daemon["stop"]), 2)
        self.assert_clean()


class GuardianCommands(SweepTestCase):
    """`mps_node cleanup` removes a daemon whose guardian is gone (e.g. SIGKILLed with the sweep)."""

    def test_cleanup_removes_an_orphaned_daemon(self):
        base = os.path.join(self.tmp, "mpsb-orphan")
        env = dict(self.env, PYTHONPATH=os.pathsep.join(PACKAGE_PATH), FAKE_MPS_SPAWN_SERVER="1")
        code = ("import sys; from mpsbench_sweep.daemon.mps_daemon import Daemon; "
                f"Daemon(sys.argv[1], {base!r}).start(5)")
        subprocess.run([sys.executable, "-c", code, FAKE_CONTROL], env=env, check=True, timeout=30)
        with open(os.path.join(base, "pipe", "daemon.pid")) as f:
            daemon = int(f.read())
        self.assertTrue(pid_alive(daemon))
        r = subprocess.run([sys.executable, "-m", "mpsbench_sweep.daemon.guardian", "cleanup", "--base-dir", base,
                            "--control", FAKE_CONTROL, "--grace", "2"], env=env, capture_output=True, text=True,
                           timeout=60)
        self.assertEqual(r.returncode, 0, r.stderr)
        report = json.loads(r.stdout)
        self.assertTrue(report["exited_after_quit"] and report["dirs_removed"], report)
        self.assert_clean()


if __name__ == "__main__":
    unittest.main()


class ParallelTests(unittest.TestCase):
    """The sweep's tests run in parallel (one ctest test per module): a daemon another test started is not this
    test's foreign daemon, while a daemon without a test's mark (every real one) always is. The processes started
    here carry a mark: an unmarked one would be every parallel test's foreign daemon."""

    def test_another_tests_daemon_is_skipped_its_own_is_found(self):
        from mpsbench_sweep.daemon import mps_daemon
        started = []
        try:
            for tag in ("other-test", "this-test"):
                env = dict(os.environ, SWEEP_TEST_TAG=tag, CUDA_MPS_PIPE_DIRECTORY=f"/nonexistent/{tag}")
                started.append(subprocess.Popen(["nvidia-cuda-mps-control", "-d", "-c", "import time; time.sleep(60)"],
                                                executable=sys.executable, env=env))
            time.sleep(0.3)
            pids = [p.pid for p in started]
            saved = os.environ.get("SWEEP_TEST_TAG")
            os.environ["SWEEP_TEST_TAG"] = "this-test"
            try:
                found = {f["pid"] for f in mps_daemon.find_foreign()} & set(pids)
            finally:
                if saved is None:
                    del os.environ["SWEEP_TEST_TAG"]
                else:
                    os.environ["SWEEP_TEST_TAG"] = saved
            self.assertEqual(found, {pids[1]})
            # The check for other users' MPS processes in /proc skips another test's in the same way.
            from mpsbench_sweep.daemon import node_checks
            os.environ["SWEEP_TEST_TAG"] = "this-test"
            try:
                listed = {p["pid"] for p in node_checks.mps_processes("/proc")} & set(pids)
            finally:
                if saved is None:
                    del os.environ["SWEEP_TEST_TAG"]
                else:
                    os.environ["SWEEP_TEST_TAG"] = saved
            self.assertEqual(listed, {pids[1]})
        finally:
            for p in started:
                p.kill()
                p.wait()

    def test_an_unmarked_process_is_never_another_tests(self):
        from mpsbench_sweep import procs
        saved = os.environ.get("SWEEP_TEST_TAG")
        try:
            os.environ["SWEEP_TEST_TAG"] = "this-test"
            self.assertFalse(procs.of_another_test({b"PATH": b"/usr/bin"}))
            self.assertFalse(procs.of_another_test(None))  # environment unreadable: another user's
            self.assertFalse(procs.of_another_test({b"SWEEP_TEST_TAG": b"this-test"}))
            self.assertTrue(procs.of_another_test({b"SWEEP_TEST_TAG": b"other-test"}))
            del os.environ["SWEEP_TEST_TAG"]  # a sweep outside the tests skips nothing
            self.assertFalse(procs.of_another_test({b"SWEEP_TEST_TAG": b"other-test"}))
        finally:
            os.environ.pop("SWEEP_TEST_TAG", None)
            if saved is not None:
                os.environ["SWEEP_TEST_TAG"] = saved
