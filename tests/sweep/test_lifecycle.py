"""The sweep's MPS daemon life cycle and job handling against fakes (no GPU, no MPI needed)."""
import json
import os
import signal
import time
import unittest

from sweeptest import SweepTestCase, pid_alive

from mpsbench_core.records import results_of  # noqa: E402
from mpsbench_core.sweep_settings import recorded_threshold  # noqa: E402
from mpsbench_core.verdict import verdict_lines, verdicts  # noqa: E402
from mpsbench_sweep.console_report import console_report  # noqa: E402


class NormalEnd(SweepTestCase):
    def test_all_modes_merged_table_and_nothing_left(self):
        r = self.sweep(self.fake_args("--", "--kernel", "matmul", "--size", "64,128"), FAKE_MPS_SPAWN_SERVER="1")
        self.assertEqual(r.returncode, 0, r.stderr)
        doc = self.merged()
        self.assertTrue(doc["complete"])
        sweep = doc["context"]["sweep"]
        self.assertEqual((sweep["exit_code"], sweep["gain_threshold"]), (0, 1.1))
        got = sorted((x["mode"], x["ranks_per_gpu"], x["size"], x["mps_active_thread_percentage"] or 0)
                     for x in doc["results"])
        want = sorted([(m, k, s, 0) for m in ("timeslice", "mps", "streams") for k in (1, 2, 4) for s in (64, 128)] +
                      [("mps-qos", k, s, 100 // k) for k in (1, 2, 4) for s in (64, 128)])
        self.assertEqual(got, want)
        jobs = sweep["jobs"]
        self.assertEqual([(j["mode"], j["np"], j["thread_percentage"], j["status"]) for j in jobs],
                         [("timeslice", 4, None, "ok"), ("mps", 4, None, "ok"), ("mps-qos", 1, 100, "ok"),
                          ("mps-qos", 2, 50, "ok"), ("mps-qos", 4, 25, "ok"), ("streams", 1, None, "ok")])
        self.assertIsNone(jobs[0]["daemon"])
        self.assertTrue(all(j["daemon"]["started_by_sweep"] for j in jobs[1:5]))
        self.assertEqual(len({j["daemon"]["pipe_dir"] for j in jobs[2:5]}), 1, "one daemon for all mps-qos jobs")
        self.assertNotEqual(jobs[1]["daemon"]["pipe_dir"], jobs[2]["daemon"]["pipe_dir"])
        self.assertEqual([r["context_memory_bytes"] for r in jobs[1]["ranks"]], [None] + [20 * 2**20] * 3)
        for d in sweep["daemons"]:
            (report,) = d["stop"]
            self.assertTrue(report["exited_after_quit"], report)
            self.assertEqual((report["killed"], report["survivors"]), ([], []))
            self.assertTrue(d["verified_gone"])
            self.assertTrue(os.path.isfile(os.path.join(report["logs"], "control.log")))
        # The table: per row, the modes, MPS gain = 1.5, mps/streams = 0.75, ts/streams = 0.5.
        lines = r.stdout.splitlines()
        header = next(l for l in lines if l.startswith("kernel"))
        for word in ("timeslice", "mps", "mps-qos", "streams", "MPS gain", "mps/streams", "ts/streams", "verified"):
            self.assertIn(word, header)
        row = next(l for l in lines if l.split()[:4] == ["matmul", "fp32", "128", "2"])
        self.assertEqual(row.split()[4:], ["2.00", "TFLOP/s", "3.00", "TFLOP/s", "2.50", "TFLOP/s", "4.00",
                                           "TFLOP/s", "1.50x", "[1.50-1.50]", "0.75x", "0.50x", "yes"])
        self.assertIn("mps-qos: CUDA_MPS_ACTIVE_THREAD_PERCENTAGE per ranks/gpu: 1: 100%, 2: 50%, 4: 25%", r.stdout)
        self.assertIn("context per rank", r.stdout)
        self.assertEqual(sorted(n for n in os.listdir(self.workdir) if n.startswith("part-") and n.endswith(".json")),
                         [], "part files are removed after a successful merge")
        self.assert_clean()

    def test_the_verdict_lines_come_again_from_the_file(self):
        # The threshold the run used is recorded, so the file alone gives the lines it printed (as
        # `mpsbench-analyze verdict FILE` does, through the same core functions).
        # The fake's MPS gain is 1.5: below a threshold of 1.6 at every size.
        r = self.sweep(self.fake_args("--gain-threshold", "1.6", "--", "--size", "64,128", modes="timeslice,mps"))
        self.assertEqual(r.returncode, 0, r.stderr)
        doc = self.merged()
        self.assertEqual(recorded_threshold(doc), 1.6)
        again = verdict_lines(verdicts(results_of([doc]), recorded_threshold(doc)))
        self.assertEqual([l for l in r.stdout.splitlines() if l.startswith("verdict: ")], again)
        self.assertIn("MPS does not pay off at any size measured (gain below 1.6x)", again[0])
        # The whole block after the memory summary is console_report's; the time profile follows it.
        report = console_report(doc, recorded_threshold(doc))
        self.assertIn(report, r.stdout)
        self.assertTrue(r.stdout.split(report, 1)[1].lstrip("\n").startswith("where the time went (s):"))

    def test_qos_percentages_and_keep_parts(self):
        r = self.sweep(self.fake_args("--qos-percentages", "30,60", "--keep-parts", modes="mps-qos", ranks="2"))
        self.assertEqual(r.returncode, 0, r.stderr)
        doc = self.merged()
        self.assertEqual(sorted(x["mps_active_thread_percentage"] for x in doc["results"]), [30, 60])
        self.assertIn("mps-qos 30%", r.stdout)
        self.assertTrue(os.path.isfile(os.path.join(self.workdir, "part-mps-qos-k2-p30.json")))
        self.assert_clean()

    def test_green_after_the_daemon_is_gone_against_mps_qos(self):
        r = self.sweep(self.fake_args(modes="mps-qos,green", ranks="2,4"), FAKE_JOB_ENV_LOG=os.path.join(self.tmp, "env.log"))
        self.assertEqual(r.returncode, 0, r.stderr)
        with open(os.path.join(self.tmp, "env.log")) as f:
            seen = [json.loads(l) for l in f]
        # green is one rank per GPU and no MPS client (fake_job refuses a client in a non-MPS mode).
        self.assertEqual([(e["mode"], e["np"]) for e in seen], [("mps-qos", 2), ("mps-qos", 4), ("green", 1)])
        doc = self.merged()
        self.assertEqual(sorted((x["mode"], x["ranks_per_gpu"]) for x in doc["results"]),
                         [("green", 2), ("green", 4), ("mps-qos", 2), ("mps-qos", 4)])
        row = next(l for l in r.stdout.splitlines() if l.split()[2:4] == ["-", "4"] or l.split()[3:4] == ["4"])
        self.assertIn("0.90x", row.split())  # green 1.125 k against mps-qos 1.25 k
        self.assert_clean()

    def test_a_mix_sets_the_ranks_per_gpu_in_every_mode(self):
        args = [a for a in self.fake_args(modes="timeslice,mps") if a not in ("--ranks-per-gpu", "1,2,4")]
        r = self.sweep(args + ["--", "--mix", "matmul:2,inference:1"],
                       FAKE_JOB_ENV_LOG=os.path.join(self.tmp, "env.log"))
        self.assertEqual(r.returncode, 0, r.stderr)
        with open(os.path.join(self.tmp, "env.log")) as f:
            seen = [json.loads(l) for l in f]
        self.assertEqual([(e["mode"], e["np"], "--ranks-per-gpu" in e["argv"], "--mix" in e["argv"]) for e in seen],
                         [("timeslice", 3, False, True), ("mps", 3, False, True)])
        self.assertEqual(sorted({x["ranks_per_gpu"] for x in self.merged()["results"]}), [3])
        self.assert_clean()

    def test_a_mix_refuses_what_it_sets_itself(self):
        for extra, message in ((["--ranks-per-gpu", "2"], "--ranks-per-gpu: not with --mix"),
                               (["--modes", "timeslice,streams"], "streams run(s) one rank per GPU"),
                               (["--client-ramp"], "--client-ramp: not with --mix")):
            args = [a for a in self.fake_args() if a not in ("--modes", "timeslice,mps,mps-qos,streams",
                                                               "--ranks-per-gpu", "1,2,4")]
            r = self.sweep(extra + args + ["--", "--mix", "matmul:2,inference:1"])
            self.assertEqual(r.returncode, 2, (extra, r.stderr))
            self.assertIn(message, r.stderr)
            self.assert_clean()

    def test_verification_failure_goes_on_and_exits_1(self):
        r = self.sweep(self.fake_args(modes="timeslice,streams"), FAKE_JOB_VERIFY_FAIL="timeslice")
        self.assertEqual(r.returncode, 1, r.stderr)
        doc = self.merged()
        self.assertTrue(doc["complete"])
        self.assertEqual([j["status"] for j in doc["context"]["sweep"]["jobs"]], ["verification_failed", "ok"])
        self.assertIn("NO: timeslice", r.stdout)
        self.assert_clean()


class DaemonFailures(SweepTestCase):
    def test_start_failure(self):
        r = self.sweep(self.fake_args(modes="timeslice,mps"), FAKE_MPS_FAIL_START="1")
        self.assertEqual(r.returncode, 3, r.stderr)
        self.assertIn("mps: the MPS control daemon did not start", r.stderr)
        self.assertIn("FAKE_MPS_FAIL_START", r.stderr)
        doc = self.merged()  # timeslice results kept
        self.assertFalse(doc["complete"])
        self.assertEqual({x["mode"] for x in doc["results"]}, {"timeslice"})
        self.assertEqual([j["status"] for j in doc["context"]["sweep"]["jobs"]], ["ok", "not_run"])
        self.assert_clean()

    def test_never_ready(self):
        r = self.sweep(self.fake_args("--mps-ready-timeout", "1", modes="mps"), FAKE_MPS_NEVER_READY="1",
                       FAKE_MPS_SPAWN_SERVER="1")
        self.assertEqual(r.returncode, 3, r.stderr)
        self.assertIn("did not answer get_server_list within 1 s", r.stderr)
        self.assertFalse(os.path.exists(self.output), "no job ran, so there is nothing to merge")
        with open(os.path.join(self.workdir, "sweep.json")) as f:
            (daemon,) = json.load(f)["daemons"]
        (report,) = daemon["stop"]
        self.assertGreaterEqual(len(report["terminated"]), 2, report)  # the daemon and its server
        self.assertTrue(daemon["verified_gone"])
        self.assert_clean()

    def test_quit_ignored_daemon_and_server_are_killed(self):
        r = self.sweep(self.fake_args("--mps-quit-timeout", "1", modes="mps", ranks="2"), FAKE_MPS_HANG_QUIT="1",
                       FAKE_MPS_IGNORE_TERM="1", FAKE_MPS_SPAWN_SERVER="1", FAKE_MPS_SERVER_CLEAN_ENV="1")
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertIn("did not exit after quit", r.stderr)
        (daemon,) = self.merged()["context"]["sweep"]["daemons"]
        (report,) = daemon["stop"]
        self.assertEqual(report["quit"]["exit_code"], None)  # the quit command itself hung and was killed
        self.assertFalse(report["exited_after_quit"])
        # SIGTERM is ignored: both need SIGKILL; the server (no pipe variable) is found as the daemon's child.
        self.assertEqual(len(report["killed"]), 2, report)
        self.assertEqual(report["survivors"], [])
        self.assert_clean()


class JobFailures(SweepTestCase):
    def test_crashed_rank_stops_sweep_keeps_results(self):
        r = self.sweep(self.fake_args(modes="timeslice,mps,streams"), FAKE_JOB_CRASH="mps", FAKE_MPS_SPAWN_SERVER="1")
        self.assertEqual(r.returncode, 3, r.stderr)
        self.assertIn("mps: the job exited with status 134", r.stderr)
        doc = self.merged()
        self.assertFalse(doc["complete"])
        self.assertEqual({x["mode"] for x in doc["results"]}, {"timeslice"})
        jobs = doc["context"]["sweep"]["jobs"]
        self.assertEqual([(j["status"], j["exit_code"]) for j in jobs], [("ok", 0), ("failed", 134), ("not_run", None)])
        (daemon,) = doc["context"]["sweep"]["daemons"]
        self.assertTrue(daemon["stop"][0]["exited_after_quit"])
        self.assert_clean()

    def test_rejected_input_stops_with_2_and_shows_the_line(self):
        r = self.sweep(self.fake_args(modes="timeslice,mps"), FAKE_JOB_REJECT="mps")
        self.assertEqual(r.returncode, 2, r.stderr)
        self.assertIn("mps: mpsbench rejected the job before any work: mpsbench: error: matmul fp32 size 46000",
                      r.stderr)
        self.assertEqual([j["status"] for j in self.merged()["context"]["sweep"]["jobs"]], ["ok", "rejected"])
        self.assert_clean()

    def test_mps_state_mismatch_is_a_failure(self):
        r = self.sweep(self.fake_args(modes="mps"), FAKE_JOB_NOT_CLIENT="mps")
        self.assertEqual(r.returncode, 3, r.stderr)
        self.assertIn("the ranks' MPS state is not what the mode needs", r.stderr)
        self.assert_clean()

    def test_timeout_kills_the_job_session(self):
        pid_dir = os.path.join(self.tmp, "pids")
        os.mkdir(pid_dir)
        r = self.sweep(self.fake_args("--timeout", "2", modes="mps"), FAKE_JOB_HANG="mps", FAKE_JOB_IGNORE_TERM="1",
                       FAKE_JOB_PID_DIR=pid_dir)
        self.assertEqual(r.returncode, 3, r.stderr)
        self.assertIn("still running after --timeout 2 s", r.stderr)
        with open(os.path.join(pid_dir, "mps.pids")) as f:
            pids = [int(p) for p in f.read().split()]
        self.assertFalse(any(pid_alive(p) for p in pids))
        doc = self.merged()  # the hung job's context-only part: valid, incomplete
        self.assertFalse(doc["complete"])
        self.assertEqual(doc["context"]["sweep"]["jobs"][0]["status"], "timeout")
        self.assert_clean()


class Signals(SweepTestCase):
    def interrupt(self, sig, mode, modes, **env):
        pid_dir = os.path.join(self.tmp, "pids")
        os.mkdir(pid_dir)
        proc = self.start_sweep(self.fake_args(modes=modes), FAKE_JOB_HANG=mode, FAKE_JOB_PID_DIR=pid_dir,
                                FAKE_MPS_SPAWN_SERVER="1", **env)
        try:
            self.wait_for_file(os.path.join(pid_dir, f"{mode}.pids"), proc)
            proc.send_signal(sig)
            out, err = proc.communicate(timeout=60)
        finally:
            if proc.poll() is None:
                proc.kill()
                proc.communicate()
        with open(os.path.join(pid_dir, f"{mode}.pids")) as f:
            pids = [int(p) for p in f.read().split()]
        self.assertFalse(any(pid_alive(p) for p in pids), "the job's processes are gone")
        return proc.returncode, out, err

    def test_sigint_during_mps_qos(self):
        rc, out, err = self.interrupt(signal.SIGINT, "mps-qos", "timeslice,mps-qos,streams")
        self.assertEqual(rc, 130, err)
        self.assertIn("interrupted by SIGINT", err)
        doc = self.merged()
        self.assertFalse(doc["complete"])
        self.assertEqual([j["status"] for j in doc["context"]["sweep"]["jobs"]],
                         ["ok", "interrupted", "not_run", "not_run", "not_run"])
        self.assertEqual({x["mode"] for x in doc["results"]}, {"timeslice"})
        self.assertTrue(doc["context"]["sweep"]["daemons"][0]["verified_gone"])
        self.assertIn("timeslice", out)  # the table of what was kept
        self.assert_clean()

    def test_sigterm_during_mps_job_that_ignores_sigterm(self):
        rc, out, err = self.interrupt(signal.SIGTERM, "mps", "mps", FAKE_JOB_IGNORE_TERM="1")
        self.assertEqual(rc, 143, err)
        doc = self.merged()
        self.assertEqual(doc["context"]["sweep"]["jobs"][0]["status"], "interrupted")
        self.assertEqual(doc["context"]["sweep"]["exit_code"], 143)
        self.assert_clean()

    def test_sigint_while_the_daemon_is_starting(self):
        proc = self.start_sweep(self.fake_args("--mps-ready-timeout", "60", modes="mps"), FAKE_MPS_NEVER_READY="1")
        deadline = time.monotonic() + 30
        while not any(os.path.isfile(os.path.join(self.tmp, n, "pipe", "daemon.pid"))
                      for n in os.listdir(self.tmp) if n.startswith("mpsb-")):
            self.assertLess(time.monotonic(), deadline, "the daemon never started")
            time.sleep(0.05)
        started = time.monotonic()
        proc.send_signal(signal.SIGINT)
        out, err = proc.communicate(timeout=60)
        self.assertEqual(proc.returncode, 130, err)
        self.assertLess(time.monotonic() - started, 15, "the guardian must not wait out the ready timeout")
        self.assert_clean()

    def test_sigkilled_sweep_guardian_still_removes_daemon(self):
        pid_dir = os.path.join(self.tmp, "pids")
        os.mkdir(pid_dir)
        proc = self.start_sweep(self.fake_args(modes="mps"), FAKE_JOB_HANG="mps", FAKE_JOB_PID_DIR=pid_dir,
                                FAKE_MPS_SPAWN_SERVER="1")
        self.wait_for_file(os.path.join(pid_dir, "mps.pids"), proc)
        (base,) = [n for n in os.listdir(self.tmp) if n.startswith("mpsb-") and os.path.isdir(os.path.join(self.tmp, n, "pipe"))]
        with open(os.path.join(self.tmp, base, "pipe", "daemon.pid")) as f:
            daemon = int(f.read())
        proc.kill()
        proc.communicate(timeout=30)
        # The guardian sees end of input, quits the daemon and removes its directory.
        deadline = time.monotonic() + 20
        while (pid_alive(daemon) or os.path.exists(os.path.join(self.tmp, base))) and time.monotonic() < deadline:
            time.sleep(0.1)
        self.assertFalse(pid_alive(daemon))
        self.assertFalse(os.path.exists(os.path.join(self.tmp, base)))


if __name__ == "__main__":
    unittest.main()
