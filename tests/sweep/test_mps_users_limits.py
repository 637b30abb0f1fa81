"""Other users' MPS processes, memory limits (mps-mem) and the client ramp, against the fakes (no GPU, no MPI).

Other users' processes are planted in a fake /proc (MPSBENCH_PROC_ROOT) and in a
foreign fake daemon's server and client lists (FAKE_MPS_SERVERS); a client past
the MPS client limit is the fake job's FAKE_JOB_CLIENT_LIMIT (fails like a CUDA
context refused by the server) or FAKE_JOB_CLIENT_LIMIT_HANG (waits for ever).
"""
import json
import os
import subprocess
import time
import unittest

from sweeptest import FAKE_CONTROL, SweepTestCase, pid_alive

OTHER_UID = 4242 if os.geteuid() != 4242 else 4343


def passthrough(argv):
    """The options after -- as the fake job got them: after the mpsbench path, before the sweep's own --mode."""
    return argv[3:argv.index("--mode")]


def plant(root, pid, name, uid, argv=None, state="S (sleeping)"):
    """A process in a fake /proc: its status (Name, State, Uid) and, when argv is given, its cmdline."""
    d = os.path.join(root, str(pid))
    os.makedirs(d)
    with open(os.path.join(d, "status"), "w") as f:
        f.write(f"Name:\t{name}\nState:\t{state}\nUid:\t{uid}\t{uid}\t{uid}\t{uid}\nGid:\t{uid}\t{uid}\t{uid}\t{uid}\n")
    if argv is not None:
        with open(os.path.join(d, "cmdline"), "wb") as f:
            f.write(b"\0".join(a.encode() for a in argv) + b"\0")


class OtherUsers(SweepTestCase):
    def proc_root(self):
        root = os.path.join(self.tmp, "proc")
        os.makedirs(root)
        return root

    def other_server(self):
        root = self.proc_root()
        plant(root, 4321, "nvidia-cuda-mps", OTHER_UID, ["nvidia-cuda-mps-server"])
        plant(root, 4300, "nvidia-cuda-mps", os.geteuid(), ["nvidia-cuda-mps-control"])  # a client command: not one
        return root

    def the_line(self, stderr):
        lines = [l for l in stderr.splitlines() if "another user's MPS processes" in l]
        self.assertEqual(len(lines), 1, stderr)
        return lines[0]

    def test_another_users_server_is_refused_with_one_line(self):
        r = self.sweep(self.fake_args(modes="timeslice,mps"), MPSBENCH_PROC_ROOT=self.other_server())
        self.assertEqual(r.returncode, 2, r.stderr)
        line = self.the_line(r.stderr)
        self.assertIn(f"MPS server pid 4321, uid {OTHER_UID}", line)
        self.assertIn("the MPS control daemon makes a client of a different user wait until the other user's server "
                      "has no clients left, which silently serialises the two users' jobs, so the timings would "
                      "include that wait", line)
        self.assertIn("pass --other-mps-users go-on", line)
        self.assertNotIn("pid 4300", line)
        self.assertFalse(os.path.exists(self.output), "nothing ran")
        self.assert_clean()

    def test_go_on_measures_and_records(self):
        log = os.path.join(self.tmp, "env.log")
        r = self.sweep(self.fake_args("--other-mps-users", "go-on", "--", "--size", "64", modes="timeslice,mps",
                                      ranks="1,2"), MPSBENCH_PROC_ROOT=self.other_server(), FAKE_JOB_ENV_LOG=log)
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertIn("note: another user's MPS processes run here", r.stderr)
        with open(log) as f:  # mpsbench looks on every host of its job too: it is told to go on as well
            self.assertEqual([passthrough(json.loads(l)["argv"]) for l in f],
                             [["--other-mps-users", "go-on", "--size", "64"]] * 2)
        sweep = self.merged()["context"]["sweep"]
        self.assertEqual(sweep["other_mps_users"]["policy"], "go-on")
        self.assertEqual([(f["what"], f["pid"], f["uid"]) for f in sweep["other_mps_users"]["found"]],
                         [("server", 4321, OTHER_UID)])
        self.assertEqual([j["status"] for j in sweep["jobs"]], ["ok", "ok"])
        self.assert_clean()

    def test_daemon_of_another_user_without_a_readable_command_line(self):
        root = self.proc_root()
        plant(root, 77, "nvidia-cuda-mps", OTHER_UID)  # no cmdline: hidden; the cut name is all there is
        plant(root, 78, "nvidia-cuda-mps", OTHER_UID, ["nvidia-cuda-mps-control", "-d"], state="Z (zombie)")
        r = self.sweep(self.fake_args(modes="mps"), MPSBENCH_PROC_ROOT=root)
        self.assertEqual(r.returncode, 2, r.stderr)
        line = self.the_line(r.stderr)
        self.assertIn(f"MPS daemon or server pid 77, uid {OTHER_UID}", line)
        self.assertNotIn("pid 78", line)  # a zombie has exited
        self.assert_clean()

    @unittest.skipUnless(os.geteuid() == 0, "needs root to start a process under another UID")
    def test_a_real_server_process_of_another_user(self):
        # A process named nvidia-cuda-mps-server (sleep under that name) running as another UID, in the real /proc.
        def become_other():
            os.setgid(OTHER_UID)
            os.setuid(OTHER_UID)
        server = subprocess.Popen(["nvidia-cuda-mps-server", "120"], executable="/bin/sleep", env=self.env,
                                  preexec_fn=become_other, cwd="/")
        try:
            r = self.sweep(self.fake_args(modes="timeslice,mps", ranks="1"))
            self.assertEqual(r.returncode, 2, r.stderr)
            self.assertIn(f"MPS server pid {server.pid}, uid {OTHER_UID}", self.the_line(r.stderr))
            # Go on: neither the sweep's check for daemons it did not start nor the guardian's counts it again.
            r = self.sweep(self.fake_args("--other-mps-users", "go-on", modes="timeslice,mps", ranks="1"))
            self.assertEqual(r.returncode, 0, r.stderr)
            (found,) = self.merged()["context"]["sweep"]["other_mps_users"]["found"]
            self.assertEqual((found["pid"], found["source"]), (server.pid, "/proc"))
            self.assertIsNone(self.merged()["context"]["sweep"]["existing_daemon"])
            self.assertTrue(pid_alive(server.pid), "another user's server is left alone")
        finally:
            server.kill()
            server.wait()
        self.assert_clean()

    def test_modes_without_mps_are_not_checked(self):
        r = self.sweep(self.fake_args(modes="timeslice,streams", ranks="1"), MPSBENCH_PROC_ROOT=self.other_server())
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertNotIn("another user's", r.stderr)
        self.assertNotIn("other_mps_users", self.merged()["context"]["sweep"])
        self.assert_clean()

    def test_a_servers_client_of_another_user_through_the_control_program(self):
        # Only the daemon knows: its server (our UID) has a client of another UID.
        root = self.proc_root()
        plant(root, 90001, "nvidia-cuda-mps", os.geteuid(), ["nvidia-cuda-mps-server"])
        plant(root, 90002, "mpsbench", OTHER_UID, ["mpsbench"])
        pipe, daemon_env = self.start_foreign_daemon(FAKE_MPS_SERVERS="90001:90002")
        pid = self.foreign_pid(pipe)
        try:
            r = self.sweep(self.fake_args(modes="mps", ranks="1"), MPSBENCH_PROC_ROOT=root)
            self.assertEqual(r.returncode, 2, r.stderr)
            line = self.the_line(r.stderr)
            self.assertIn(f"a client of MPS server pid 90001, pid 90002, uid {OTHER_UID}", line)
            self.assertEqual(line.count("90001"), 1, line)  # the server is ours: only its client counts
            # Told to go on, and to use that daemon: the job runs against it, both are recorded.
            r = self.sweep(self.fake_args("--other-mps-users", "go-on", "--existing-daemon", "use", modes="mps",
                                          ranks="1"), MPSBENCH_PROC_ROOT=root)
            self.assertEqual(r.returncode, 0, r.stderr)
            sweep = self.merged()["context"]["sweep"]
            (found,) = sweep["other_mps_users"]["found"]
            self.assertEqual((found["what"], found["server_pid"], found["source"]),
                             ("client", 90001, f"get_client_list 90001 at {pipe}"))
            self.assertTrue(sweep["existing_daemon"]["used"])
            self.assertTrue(pid_alive(pid))
        finally:
            subprocess.run([FAKE_CONTROL], input="quit\n", env=daemon_env, capture_output=True, text=True, timeout=10)
            deadline = time.monotonic() + 10
            while pid_alive(pid) and time.monotonic() < deadline:
                time.sleep(0.05)
        self.assert_clean()


class MemoryLimits(SweepTestCase):
    def env_log(self):
        with open(os.path.join(self.tmp, "env.log")) as f:
            return [json.loads(l) for l in f]

    def test_one_job_per_limit_and_the_variable_reaches_each_job(self):
        r = self.sweep(self.fake_args("--mem-limits", "8G,512mb,2g", "--gpus-per-node", "2",
                                      modes="timeslice,mps,mps-mem", ranks="1,2"),
                       FAKE_JOB_GPUS="2", FAKE_JOB_ENV_LOG=os.path.join(self.tmp, "env.log"),
                       FAKE_MPS_SPAWN_SERVER="1",
                       # The ordinals a rank enumerates: two, as on the fake's node, also where a real
                       # nvidia-smi would count this machine's GPUs (the GPU machine runs these tests too).
                       CUDA_VISIBLE_DEVICES="0,1")
        self.assertEqual(r.returncode, 0, r.stderr)
        seen = [(e["mode"], e["env"].get("CUDA_MPS_PINNED_DEVICE_MEM_LIMIT"), e["argv"][e["argv"].index("--mode") + 1])
                for e in self.env_log()]
        self.assertEqual(seen, [("timeslice", None, "timeslice"), ("mps", None, "mps"),
                                ("mps", "0=512MB,1=512MB", "mps"), ("mps", "0=2G,1=2G", "mps"),
                                ("mps", "0=8G,1=8G", "mps")])
        doc = self.merged()
        sweep = doc["context"]["sweep"]
        self.assertEqual(sweep["modes"], ["timeslice", "mps", "mps-mem"])
        self.assertEqual(sweep["mem_limits"], ["512MB", "2G", "8G"])
        jobs = sweep["jobs"]
        self.assertEqual([(j["label"], j.get("mem_limit_env"), j["np"], j["status"]) for j in jobs],
                         [("timeslice", None, 4, "ok"), ("mps", None, 4, "ok"),
                          ("mps-mem 512MB", "0=512MB,1=512MB", 4, "ok"), ("mps-mem 2G", "0=2G,1=2G", 4, "ok"),
                          ("mps-mem 8G", "0=8G,1=8G", 4, "ok")])
        self.assertEqual(jobs[3]["mem_limit_bytes"], 2 * 2**30)
        self.assertEqual(len({j["daemon"]["pipe_dir"] for j in jobs[2:]}), 1, "one daemon for all mps-mem jobs")
        got = sorted((x["mode"], x.get("mps_pinned_device_mem_limit"), x["ranks_per_gpu"]) for x in doc["results"])
        want = sorted([("timeslice", None, k) for k in (1, 2)] + [("mps", None, k) for k in (1, 2)] +
                      [("mps-mem", m, k) for m in ("512MB", "2G", "8G") for k in (1, 2)])
        self.assertEqual(got, want)
        header = next(l for l in r.stdout.splitlines() if l.startswith("kernel"))
        self.assertIn("mps-mem 512MB", header)
        self.assertLess(header.index("mps-mem 512MB"), header.index("mps-mem 2G"))
        self.assertLess(header.index("mps-mem 2G"), header.index("mps-mem 8G"))
        self.assert_clean()

    def test_limits_alone_add_mps_mem_to_the_default_modes(self):
        r = self.sweep(self.fake_args("--mem-limits", "1G", ranks="1")[2:],  # no --modes
                       FAKE_JOB_ENV_LOG=os.path.join(self.tmp, "env.log"))
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertEqual([(e["argv"][e["argv"].index("--mode") + 1], e["env"].get("CUDA_MPS_PINNED_DEVICE_MEM_LIMIT"))
                          for e in self.env_log()],
                         [("timeslice", None), ("mps", None), ("mps-qos", None), ("mps", "0=1G"), ("streams", None)])
        self.assertEqual(self.merged()["context"]["sweep"]["modes"],
                         ["timeslice", "mps", "mps-qos", "mps-mem", "streams"])
        self.assert_clean()

    def test_bad_input(self):
        for args, message in ((["--mem-limits", "2X"], "'2X' is not a memory size"),
                              (["--modes", "mps,mps-mem"], "mps-mem needs --mem-limits"),
                              (["--modes", "mps", "--mem-limits", "2G"], "mode mps-mem is not in --modes")):
            r = self.sweep(self.fake_args()[2:] + args)
            self.assertEqual(r.returncode, 2, r.stderr)
            self.assertIn(message, r.stderr)


class ClientRamp(SweepTestCase):
    def ramp_args(self, *extra):
        args = self.fake_args(*extra, modes="mps")
        assert args[0] == "--modes" and args[2] == "--ranks-per-gpu"
        rounds = args.index("--rounds")
        # No --modes, no --ranks-per-gpu, no --rounds: the ramp's own default is one round.
        return ["--client-ramp"] + args[4:rounds] + args[rounds + 2:]

    def ramp(self):
        with open(os.path.join(self.workdir, "sweep.json")) as f:
            return json.load(f)["client_ramp"]

    def test_past_the_limit_is_a_recorded_failure(self):
        log = os.path.join(self.tmp, "env.log")
        r = self.sweep(self.ramp_args("--mps-client-limit", "4", "--", "--size", "128"), FAKE_JOB_CLIENT_LIMIT="4",
                       FAKE_JOB_ENV_LOG=log, FAKE_MPS_SPAWN_SERVER="1")
        self.assertEqual(r.returncode, 0, r.stderr)
        with open(log) as f:
            argvs = [json.loads(l)["argv"] for l in f]
        self.assertEqual([a[a.index("--ranks-per-gpu") + 1] for a in argvs], ["1", "2", "4", "5"])
        self.assertEqual(passthrough(argvs[0]), ["--preset", "client-ramp", "--size", "128"])  # the preset, then ours
        ramp = self.ramp()
        self.assertEqual((ramp["limit"], ramp["limit_source"]), (4, "--mps-client-limit"))
        steps = ramp["steps"]
        self.assertEqual([(s["clients_per_gpu"], s["ranks"], s["status"], s["past_limit"]) for s in steps],
                         [(1, 1, "ok", False), (2, 2, "ok", False), (4, 4, "ok", False), (5, 5, "failed", True)])
        self.assertEqual([s["results"][0]["aggregate_median"] for s in steps[:3]], [1.5e12, 3e12, 6e12])
        self.assertEqual([s["context_memory_bytes_median"] for s in steps], [None, 20 * 2**20, 20 * 2**20, None])
        self.assertIn("resources required to create MPS client have been exhausted", steps[-1]["error"])
        self.assertIn("4 clients per GPU ran; 5 (one past the limit of 4, --mps-client-limit) failed",
                      ramp["finding"])
        doc = self.merged()
        self.assertTrue(doc["complete"], "the step past the limit ended as the ramp expects")
        self.assertEqual(doc["context"]["sweep"]["client_ramp"], ramp)
        self.assertEqual(doc["context"]["sweep"]["ranks_per_gpu"], [1, 2, 4, 5])
        self.assertEqual(doc["context"]["sweep"]["rounds"], {"count": 1, "orders": [["mps"]]}, "one round by default")
        self.assertEqual({x["round"] for x in doc["results"]}, {0})
        self.assertTrue(doc["context"]["sweep"]["jobs"][-1]["expected_failure"])
        lines = r.stdout.splitlines()
        self.assertTrue(any(l.split()[:4] == ["5", "(past)", "5", "failed"] for l in lines), r.stdout)
        self.assertTrue(any(l.split()[:5] == ["4", "4", "ok", "6.00", "TFLOP/s"] for l in lines), r.stdout)
        self.assertIn("client ramp: 4 clients per GPU ran", r.stdout)
        self.assert_clean()

    def test_a_client_left_waiting_past_the_limit_ends_at_the_timeout(self):
        started = time.monotonic()
        r = self.sweep(self.ramp_args("--mps-client-limit", "2", "--timeout", "3"), FAKE_JOB_CLIENT_LIMIT="2",
                       FAKE_JOB_CLIENT_LIMIT_HANG="1")
        self.assertLess(time.monotonic() - started, 60)
        self.assertEqual(r.returncode, 0, r.stderr)
        last = self.ramp()["steps"][-1]
        self.assertEqual((last["clients_per_gpu"], last["status"]), (3, "timeout"))
        self.assertIn("still running after --timeout 3 s, killed", last["error"])
        self.assertIn("waits for the MPS server", last["error"])  # what the job said last
        self.assertTrue(self.merged()["complete"])
        self.assert_clean()

    def test_the_limit_the_daemon_reports(self):
        r = self.sweep(self.ramp_args(), FAKE_MPS_CLIENT_LIMIT="3", FAKE_JOB_CLIENT_LIMIT="3")
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertIn("the MPS daemon reports a client limit of 3 per GPU (not 48)", r.stderr)
        ramp = self.ramp()
        self.assertEqual((ramp["limit"], ramp["server_reported_limit"]), (3, 3))
        self.assertIn("get_default_client_limit", ramp["limit_source"])
        self.assertEqual([(s["clients_per_gpu"], s["status"]) for s in ramp["steps"]],
                         [(1, "ok"), (2, "ok"), (3, "ok"), (4, "failed")])
        self.assertEqual([j["ranks_per_gpu"] for j in self.merged()["context"]["sweep"]["jobs"]], [[1], [2], [3], [4]])
        self.assert_clean()

    def test_a_failure_within_the_limit_stops_the_sweep(self):
        r = self.sweep(self.ramp_args("--mps-client-limit", "4"), FAKE_JOB_CLIENT_LIMIT="2")
        self.assertEqual(r.returncode, 3, r.stderr)
        ramp = self.ramp()
        self.assertEqual([(s["clients_per_gpu"], s["status"]) for s in ramp["steps"]],
                         [(1, "ok"), (2, "ok"), (4, "failed")])
        self.assertIn("the ramp stopped at 4 clients per GPU (failed)", ramp["finding"])
        self.assertFalse(self.merged()["complete"])
        self.assert_clean()

    def test_options_the_ramp_chooses_itself(self):
        for extra, message in ((["--modes", "timeslice"], "--client-ramp: runs mode mps only"),
                               (["--ranks-per-gpu", "2"], "--ranks-per-gpu: not with --client-ramp"),
                               (["--mem-limits", "2G"], "--mem-limits: not with --client-ramp"),
                               (["--rounds", "2"], "--rounds 2: not with --client-ramp, which measures one round")):
            r = self.sweep(self.ramp_args(*extra))
            self.assertEqual(r.returncode, 2, r.stderr)
            self.assertIn(message, r.stderr)


if __name__ == "__main__":
    unittest.main()
