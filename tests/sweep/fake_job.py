#!/usr/bin/env python3
"""Stands in for `mpirun -np N mpsbench ...` in the sweep's life-cycle tests.

Used as --launcher 'python3 fake_job.py --np {np}': it gets the sweep's
mpsbench command line, checks what a real job would see (the number of ranks,
the MPS state each rank's environment gives it), and writes a schema-valid
results file whose throughput depends on the mode in a known way
(timeslice 1x, mps 1.5x, mps-qos 1.25x, streams 2x, green 1.125x, times k), so the tests can
check the sweep's arithmetic.

Faults (environment; the value is a comma list of modes, or 1 for every mode):
  FAKE_JOB_CRASH       exit 134 before writing anything (like MPI_Abort / a crashed rank)
  FAKE_JOB_HANG        write the context (complete: false), start a child "rank",
                       write both pids to FAKE_JOB_PID_DIR/MODE.pids, sleep
  FAKE_JOB_REJECT      exit 2 with an `mpsbench: error:` line about memory
  FAKE_JOB_NOT_CLIENT  exit 2 claiming rank 0 is not an MPS client
  FAKE_JOB_VERIFY_FAIL results fail verification, exit 1
  FAKE_JOB_IGNORE_TERM=1  ignore SIGTERM (the sweep must escalate to SIGKILL)
  FAKE_JOB_CLIENT_LIMIT=N  an MPS job (mps, mps-qos) with more than N ranks per GPU fails like a client past
                       the MPS client limit: an `mpsbench: fatal:` line, exit 3 (MPI_Abort)
  FAKE_JOB_CLIENT_LIMIT_HANG=1  ... instead it hangs (a client left waiting): only --timeout ends it
  FAKE_JOB_ENV_LOG=FILE  append one JSON line per job: mode, np and the CUDA_MPS_* variables it got
  FAKE_JOB_TIMING=1    each result carries the engine's `timing` (windows 0.6 s, warm-up 0.2 s of a 1.0 s
                       configuration) and the context `timing.total_s` (0.1 s of start-up + 1.0 s per result)
  FAKE_JOB_ENERGY=1    each result carries `energy` (300 W; J per FLOP = 300 / the aggregate) and
                       `gpu_activity` (SM active 40% in timeslice, 80% in the others)
FAKE_JOB_CONTROL: the (fake) MPS control program used to ask for a daemon;
FAKE_JOB_GPUS: GPUs per node (default 1).

Turns (--turns PATH, as the sweep gives a job of a turn group; harness/runtime/turns.hpp): after the checks
above (a job that crashes or is refused there never connects) it connects to the Unix socket PATH and takes
its turns as mpsbench does: "want -1 0" (opening the GPUs), given back ("done") before it writes its context;
then for each configuration it reports (index i from 0, the order of its results) "want i 0" and "want i 1"
(two repetitions; "done" before each new want); at the end "want N 0" (N configurations), held while it writes
its results file, and the connection closed. It waits for "go" after every want; a connection it cannot make
or one the sweep closes ends it as mpsbench ends: an `mpsbench: fatal: ... --turns PATH: ...` line, exit 3.
A hung job (FAKE_JOB_HANG) hangs after its first turn, holding none (the others wait for its next want).
  FAKE_JOB_TURN_LOG=FILE  append "MODE C S" per turn taken, while holding it (-1 for the opening, N for the end)
"""
import argparse
import json
import os
import signal
import socket
import subprocess
import sys
import time

FACTOR = {"timeslice": 1.0, "mps": 1.5, "mps-qos": 1.25, "streams": 2.0, "green": 1.125}
ONE_RANK = ("streams", "green")  # one rank per GPU runs the k instances
MIB = 1024 * 1024


def fault(name, mode):
    value = os.environ.get(name, "")
    return value == "1" or mode in value.split(",")


def fail(message):
    print(f"mpsbench: error: {message}", file=sys.stderr, flush=True)
    sys.exit(2)


def daemon_answers():
    control = os.environ.get("FAKE_JOB_CONTROL")
    if not control or "CUDA_MPS_PIPE_DIRECTORY" not in os.environ:
        return False
    r = subprocess.run([control], input="get_server_list\n", capture_output=True, text=True, timeout=10)
    return r.returncode == 0


def write(path, doc):
    with open(path + ".tmp", "w") as f:
        json.dump(doc, f)
    os.replace(path + ".tmp", path)


class Turns:
    """Rank 0's side of the sweep's turns (harness/runtime/turns.cpp); without a path every call does nothing."""

    def __init__(self, path, mode, host):
        self.path, self.mode, self.host = path, mode, host
        self.sock = None
        self.holding = False
        self.buffer = b""
        if not path:
            return
        self.sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        try:
            self.sock.connect(path)
        except OSError as e:
            self.fatal(f"cannot reach the sweep's turns ({e.strerror}): --turns is for mpsbench-sweep's own jobs")

    def fatal(self, what):
        print(f"mpsbench: fatal: rank 0 on {self.host}: --turns {self.path}: {what}", file=sys.stderr, flush=True)
        sys.exit(3)

    def send(self, line):
        try:
            self.sock.sendall(line.encode())
        except OSError as e:
            self.fatal(f"the sweep is gone ({e.strerror})")

    def take(self, config, step):
        """Gives back the turn held, asks for (config, step) and returns once it is this job's."""
        if self.sock is None:
            return
        self.give()
        self.send(f"want {config} {step}\n")
        while b"\n" not in self.buffer:
            try:
                data = self.sock.recv(64)
            except OSError as e:
                self.fatal(f"reading the sweep: {e.strerror}")
            if not data:
                self.fatal("the sweep closed the connection while this job waited its turn")
            self.buffer += data
        answer, _, self.buffer = self.buffer.partition(b"\n")
        if answer != b"go":
            self.fatal(f"the sweep answered {answer.decode(errors='replace')!r}, not \"go\"")
        self.holding = True
        log = os.environ.get("FAKE_JOB_TURN_LOG")
        if log:
            with open(log, "a") as f:  # written while the turn is held: the file's order is the turns' order
                f.write(f"{self.mode} {config} {step}\n")

    def give(self):
        if self.sock is not None and self.holding:
            self.holding = False
            self.send("done\n")

    def close(self):
        """The end of the job's part (the last turn is held until the connection closes, as mpsbench's is)."""
        if self.sock is not None:
            self.sock.close()
            self.sock = None


def summary(value):
    return {"median": value, "min": value, "max": value, "samples": [value, value]}


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--np", type=int, required=True)
    p.add_argument("mpsbench")
    p.add_argument("--mode", required=True)
    p.add_argument("--ranks-per-gpu")
    p.add_argument("--mix")  # mpsbench sets the ranks per GPU from it: the tenants' sum
    p.add_argument("--output", required=True)
    p.add_argument("--kernel", default="matmul")
    p.add_argument("--size", default="64")
    p.add_argument("--turns")
    args, _ = p.parse_known_args()
    if (args.mix is None) == (args.ranks_per_gpu is None):
        fail_usage = f"fake mpsbench: give exactly one of --ranks-per-gpu and --mix (got {args.ranks_per_gpu!r}, {args.mix!r})"
        print(fail_usage, file=sys.stderr)
        sys.exit(2)
    ranks = args.ranks_per_gpu or str(sum(int(t.rpartition(":")[2]) for t in args.mix.split(",")))
    mode, ks = args.mode, [int(k) for k in ranks.split(",")]
    gpus = int(os.environ.get("FAKE_JOB_GPUS", "1"))
    host = socket.gethostname()
    if fault("FAKE_JOB_IGNORE_TERM", mode) or os.environ.get("FAKE_JOB_IGNORE_TERM") == "1":
        signal.signal(signal.SIGTERM, signal.SIG_IGN)
    if os.environ.get("FAKE_JOB_ENV_LOG"):
        with open(os.environ["FAKE_JOB_ENV_LOG"], "a") as f:
            f.write(json.dumps({"mode": mode, "np": args.np, "argv": sys.argv[1:],
                                "env": {k: v for k, v in os.environ.items() if k.startswith("CUDA_MPS_")}}) + "\n")
    limit = os.environ.get("FAKE_JOB_CLIENT_LIMIT")
    if limit and mode in ("mps", "mps-qos") and max(ks) > int(limit):
        if os.environ.get("FAKE_JOB_CLIENT_LIMIT_HANG") == "1":
            print(f"fake_job: rank {int(limit) * gpus} on {host} waits for the MPS server", file=sys.stderr, flush=True)
            time.sleep(300)
        print(f"mpsbench: fatal: rank {int(limit) * gpus} on {host}: cudaSetDevice(index) failed: the hardware "
              "resources required to create MPS client have been exhausted (device.cpp:81)", file=sys.stderr,
              flush=True)
        sys.exit(3)
    if fault("FAKE_JOB_CRASH", mode):
        print(f"fake_job: rank 0 on {host}: simulated crash", file=sys.stderr, flush=True)
        sys.exit(134)
    expected_np = gpus * (1 if mode in ONE_RANK else max(ks))
    if args.np != expected_np:
        fail(f"{max(ks)} active ranks per host requested, but only {args.np // gpus} exist (np {args.np})")
    pct = os.environ.get("CUDA_MPS_ACTIVE_THREAD_PERCENTAGE")
    client = mode in ("mps", "mps-qos")
    if client and (fault("FAKE_JOB_NOT_CLIENT", mode) or not daemon_answers()):
        fail(f"--mode {mode}: rank 0 on {host} is not an MPS client (CU_DEVICE_ATTRIBUTE_MPS_ENABLED=0): no MPS "
             "control daemon answered on its CUDA_MPS_PIPE_DIRECTORY")
    if not client:
        pipe = os.environ.get("CUDA_MPS_PIPE_DIRECTORY")
        if not pipe or not os.path.isdir(pipe) or os.listdir(pipe) or daemon_answers() or pct:
            fail(f"--mode {mode}: rank 0 on {host} is an MPS client, or its CUDA_MPS_PIPE_DIRECTORY ({pipe}) is not "
                 "a private empty directory")
    if mode == "mps-qos" and not pct:
        fail(f"--mode mps-qos: rank 0 on {host} has no CUDA_MPS_ACTIVE_THREAD_PERCENTAGE set")
    if mode == "mps" and pct:
        fail(f"--mode mps: rank 0 on {host} runs with CUDA_MPS_ACTIVE_THREAD_PERCENTAGE={pct}")
    if fault("FAKE_JOB_REJECT", mode):
        fail(f"matmul fp32 size 46000 needs 23.65 GiB per rank, but GPU 0 on {host} has 20.00 GiB free")
    pct = int(pct) if pct else None
    turns = Turns(args.turns, mode, host)
    turns.take(-1, 0)  # opening the GPUs
    turns.give()
    ranks = [{"rank": r, "host": host, "local_rank": r, "device_slot": r // gpus, "gpu_index": r % gpus,
              "gpu_uuid": f"GPU-fake-{r % gpus}", "mps_enabled": client, "sm_count": 132,
              "memory_free_bytes": 80000 * MIB, "mps_active_thread_percentage": pct,
              "context_memory_bytes": None if r < gpus else (20 if client else 500) * MIB}
             for r in range(args.np)]
    context = {"tool": "mpsbench", "version": "0.1.0", "git_commit": "fake", "git_dirty": False,
               "date_utc": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()), "argv": sys.argv, "hosts": [host],
               "mpi": {"library_version": "fake MPI", "world_size": args.np}, "mode_requested": mode,
               "device": {"requested": "auto", "used": "gpu", "note": "", "devices": gpus,
                          "max_ranks_per_device": args.np // gpus},
               "cuda": {"driver_version": "13.0", "runtime_version": "13.0", "cublas_version": 130100},
               "settings": {"min_time_s": 0.25, "repetitions": 2, "seed": 1, "allreduce_bytes": None}, "mix": None,
               "gpus": [{"host": host, "index": g, "name": "Fake GPU", "uuid": f"GPU-fake-{g}", "sm_count": 132,
                         "memory_total_bytes": 81559 * MIB, "compute_mode": "DEFAULT", "sm_clock_peak_khz": 1980000}
                        for g in range(gpus)],
               "ranks": ranks}
    doc = {"schema": "mpsbench-results", "schema_version": 3, "complete": False, "context": context, "results": []}
    write(args.output, doc)
    if fault("FAKE_JOB_HANG", mode):
        child = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(300)"])
        pid_dir = os.environ.get("FAKE_JOB_PID_DIR", os.path.dirname(args.output))
        with open(os.path.join(pid_dir, f"{mode}.pids.tmp"), "w") as f:
            f.write(f"{os.getpid()} {child.pid}\n")
        os.replace(os.path.join(pid_dir, f"{mode}.pids.tmp"), os.path.join(pid_dir, f"{mode}.pids"))
        time.sleep(300)
        sys.exit(1)
    verified = not fault("FAKE_JOB_VERIFY_FAIL", mode)
    for kernel in args.kernel.split(","):
        for size in (int(s) for s in args.size.split("=")[-1].split(",")):
            for k in ks:
                turns.take(len(doc["results"]), 0)  # configuration i: its result is the i-th (from 0)
                turns.take(len(doc["results"]), 1)
                value = 1e12 * FACTOR[mode] * k
                instances = k if mode in ONE_RANK else 1
                check = {"ok": verified, "max_rel_error": 1e-7 if verified else 0.5, "tolerance": 1e-5,
                         "checked_values": 1024, "detail": "" if verified else "planted failure"}
                doc["results"].append({
                    "kind": "kernel", "kernel": kernel, "precision": "fp32", "size": size, "ranks_per_gpu": k, "params": {},
                    "device": "gpu", "latency": None, "collective": None, "tenants": None,
                    "mode": mode, "mps_active_thread_percentage": pct, "status": "ok", "error": None,
                    "active_ranks": k * gpus, "devices": gpus, "instances_per_rank": instances,
                    "iterations_per_repetition": 10, "repetitions": 2,
                    "work_per_iteration": {"flop": 2.0 * size ** 3, "byte": 12.0 * size ** 2, "items": 0.0,
                                           "item_unit": ""},
                    "primary_metric": "flop_per_s", "primary_unit": "FLOP/s", "window_s": [0.3, 0.3],
                    "aggregate": {"flop_per_s": summary(value), "byte_per_s": summary(value / 100),
                                  "item_per_s": summary(0.0)},
                    "aggregate_cv": 0.0, "speedup_vs_one_rank_per_gpu": None if k == 1 else float(k),
                    "jain_fairness": 1.0, "verified": verified, "max_rel_error": check["max_rel_error"],
                    "ranks": [{"rank": 0 if mode in ONE_RANK else r, "instance": r if mode in ONE_RANK else 0,
                               "host": host, "local_rank": 0, "gpu_index": 0, "gpu_uuid": "GPU-fake-0",
                               "mps_enabled": client, "sm_count": 132, "iteration_time_s": summary(0.03),
                               "gpu_iteration_time_s": summary(0.03), "throughput_per_s": value / k,
                               "verification": check, "kernel_details": {}, "latency_s": None,
                               "collective_time_s": None, "tenant": None} for r in range(k)]})
                if os.environ.get("FAKE_JOB_TIMING") == "1":
                    doc["results"][-1]["timing"] = {"setup_s": 0.05, "first_run_s": 0.05, "warmup_s": 0.2,
                                                    "repetitions_s": 0.6, "windows_s": 0.6, "verification_s": 0.05,
                                                    "gather_s": 0.02, "report_s": 0.03, "wall_s": 1.0}
                if os.environ.get("FAKE_JOB_ENERGY") == "1":
                    doc["results"][-1]["energy"] = {"available": True, "joules": 180.0,
                                                    "joules_per_unit": 300.0 / value, "mean_power_w": 300.0}
                    doc["results"][-1]["gpu_activity"] = {"available": True,
                                                          "sm_active": 40.0 if mode == "timeslice" else 80.0,
                                                          "sm_occupancy": 30.0, "dram_bw": 10.0, "tensor_active": 0.0}
    if os.environ.get("FAKE_JOB_TIMING") == "1":
        doc["context"]["timing"] = {"startup_s": 0.1, "total_s": 0.1 + 1.0 * len(doc["results"])}
    doc["complete"] = True
    turns.take(len(doc["results"]), 0)  # the final report (N: the configurations)
    write(args.output, doc)
    turns.close()
    sys.exit(0 if verified else 1)


if __name__ == "__main__":
    main()
