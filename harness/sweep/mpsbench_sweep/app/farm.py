"""The application farmer: runs one configuration's copies on this node, as the sweep tells it.

    python3 -m mpsbench_sweep.app.farm

The sweep starts one farmer per node (node_channel.py: under its keeper on one
node, through srun or mpirun on several) in the environment the copies get (the
MPS variables of the mode). Standard input: first the configuration as one JSON
line (Spec below), then the commands `warmup`, `window R` (R = 0, 1, ...) and
`end`, the same lines reaching every node. Standard output: one JSON event
per step, `{"event": ..., "host": ...}`:
  probed   the GPUs this node uses (copy i on GPU i mod G of what it sees, by
           UUID) and, per GPU, what mpsbench-probe saw in the copies' environment
  failed   this node cannot run the configuration (no probe, too few GPUs, its
           run directory removed)
  warm     the warm-up runs (one per copy, untimed)
  window   one timed window: its length, every run (with --app-metric the rate
           its stdout reported, with --app-progress its timestamped counter
           lines; figure_error: why its figure cannot be taken, metric.py),
           the first failure, the GPU memory each copy used and how it
           was found (memory.py), the energy meter's answer for the window
           (meter.py) and left_running: the processes runs left behind, ended
  done     after `end`
SIGTERM, SIGINT, SIGHUP or the end of input, at any moment, stop every run
(process groups: SIGTERM, then SIGKILL) before the farmer exits; so does the
death of its parent (PR_SET_PDEATHSIG). The farmer is a subreaper: whatever a
run left behind, even in a session of its own, is ended after each window (and
during it: copies.py), so it neither skews the next window nor outlives the
sweep.
"""
import json
import os
import queue
import signal
import socket
import subprocess
import sys
import threading

from .. import nvsmi
from ..jobs.outcome import Interrupted
from ..lifetime import become_subreaper, die_with_parent, end_strays, stop_signals
from .bind import cpu_list, cpu_sets
from .copies import Copy, Farm, tail
from .memory import MemorySampler
from .metric import MetricSpec, scan_rate
from .meter import Meter
from .probe import ProbeError, run_probe

LEFTOVER_GRACE_S = 2.0


def _emit(event, **fields):
    try:
        print(json.dumps({"event": event, "host": socket.gethostname(), **fields}), flush=True)
    except (BrokenPipeError, OSError):
        pass


def choose_gpus(spec):
    """(the probe's document without restriction, [listing entry of each GPU this node uses], [probe state
    per GPU in the copies' environment]); ProbeError when impossible."""
    doc = run_probe(spec["probe"], dict(os.environ))
    listing = doc["gpus"]
    wanted = spec["gpus_per_node"]
    if len(listing) < wanted:
        raise ProbeError(f"{len(listing)} GPU(s) visible here, {wanted} per node requested")
    chosen = listing[:wanted]
    states = []
    for gpu in chosen:
        env = dict(os.environ, CUDA_VISIBLE_DEVICES=gpu["uuid"])
        states.append(run_probe(spec["probe"], env)["gpus"][0])
    return doc, chosen, states


def build_copies(spec, gpus, host_dir):
    copies = []
    count = spec["copies"]
    bind = spec.get("bind") or "none"
    bus = nvsmi.bus_ids() if bind == "numa" and gpus else {}
    cpus = cpu_sets(bind, count, [i % len(gpus) for i in range(count)] if gpus else None,
                    {i: bus.get(g["uuid"].lower()) for i, g in enumerate(gpus)})
    for i in range(count):
        gpu = gpus[i % len(gpus)] if gpus else None
        env = {"MPSBENCH_COPY": str(i), "MPSBENCH_COPIES": str(count)}
        if gpu is not None and spec["pin_gpus"]:
            env.update({"CUDA_VISIBLE_DEVICES": gpu["uuid"], "MPSBENCH_GPU_UUID": gpu["uuid"],
                        "MPSBENCH_GPU_INDEX": str(i % len(gpus))})
        if (spec.get("metric") or {}).get("method") == "progress":
            env["PYTHONUNBUFFERED"] = "1"  # each counter line leaves a Python program when printed
        directory = os.path.join(host_dir, f"copy-{i}")
        os.makedirs(directory, exist_ok=True)
        copies.append(Copy(i, i % len(gpus) if gpus else None, gpu["uuid"] if gpu else None, directory, env,
                           cpus[i]))
    return copies


def read_rates(spec, runs):
    """Each run that exited 0 gets its figure (spec: the MetricSpec): with --app-metric the rate its stdout
    reported (the last matching line), with --app-progress its counter lines, read as it went (progress.py).
    Either way checked where read (metric.py): {id(run): why its figure cannot be taken} for the runs whose
    figure is bad, which fail the configuration (job.py). A run whose stdout never matched gets the last line
    of its stderr that does, if any (progress bars such as tqdm write to stderr), for the failure's hint."""
    problems = {}
    for run in runs:
        if not run.succeeded:
            continue
        if spec.method == "metric":
            scan = scan_rate(run.stdout, spec)
            run.metric, run.metric_line, problem = scan.value, scan.line, scan.problem
            matched = scan.line is not None
        else:
            problem = (run.progress or {}).get("error")
            matched = bool((run.progress or {}).get("samples"))
        if problem is not None:
            problems[id(run)] = problem
        elif not matched:
            run.stderr_match = scan_rate(run.stderr, spec, "stderr").line
    return problems


def check_runs(check, runs, env):
    """Runs --app-check after each successful run, its stdout file in MPSBENCH_APP_STDOUT."""
    for run in runs:
        if not run.succeeded:
            continue
        check_env = dict(env, MPSBENCH_APP_STDOUT=run.stdout, MPSBENCH_APP_STDERR=run.stderr,
                         MPSBENCH_APP_COPY=str(run.copy))
        try:
            run.check_exit_code = subprocess.run(check, env=check_env, stdin=subprocess.DEVNULL,
                                                 stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL).returncode
        except OSError:
            run.check_exit_code = 127


def keep_only_useful_outputs(runs, problems):
    """Removes the outputs of passed runs but the last of each copy: a long window makes many. A run whose
    figure is bad (problems, read_rates) did not pass: the failure names its output."""
    last = {}
    for run in runs:
        last[run.copy] = run
    for run in runs:
        passed = run.succeeded and run.check_exit_code in (None, 0) and id(run) not in problems
        if passed and last[run.copy] is not run:
            for path in (run.stdout, run.stderr):
                try:
                    os.unlink(path)
                except OSError:
                    pass


def _runs_json(runs, problems):
    out = []
    for run in runs:
        record = run.record()
        if not run.succeeded and not run.stopped:
            record["stderr_tail"] = tail(run.stderr)
        record["figure_error"] = problems.get(id(run))
        out.append(record)
    return out


class Commands:
    """The sweep's lines, read by a thread of their own: the end of input is noticed during a window too,
    and stops its runs at once (the docstring's promise)."""

    def __init__(self, stdin, on_end):
        self.lines = queue.Queue()
        self.on_end = on_end
        threading.Thread(target=self._read, args=(stdin,), daemon=True).start()

    def _read(self, stdin):
        try:
            for line in stdin:
                self.lines.put(line)
        except (OSError, ValueError):
            pass
        self.lines.put(None)
        self.on_end()

    def next(self):
        return self.lines.get()


def open_meter(spec, gpus):
    """The energy meter of this node's GPUs (None when not asked for: the CPU device, or no --app metering);
    a meter that cannot work says why in each window's answer."""
    if not spec.get("energy"):
        return None
    return Meter(spec.get("meter"), [g["uuid"] for g in gpus]).open()


def _directory_id(path):
    try:
        st = os.stat(path)
    except OSError:
        return None
    return st.st_dev, st.st_ino


def serve(stop, stdin=sys.stdin):
    first = stdin.readline()
    if not first:
        return 0
    spec = json.loads(first)
    host_dir = os.path.join(spec["run_dir"], socket.gethostname())
    try:
        os.makedirs(host_dir, exist_ok=True)
    except OSError as e:
        _emit("failed", error=f"cannot create the run directory {host_dir}: {e.strerror or e}")
        return 3
    probe = {}
    if spec["device"] == "gpu":
        try:
            probe, gpus, states = choose_gpus(spec)
        except ProbeError as e:
            _emit("failed", error=f"mpsbench-probe: {e}")
            return 3
    else:
        gpus, states = [], []
    try:
        copies = build_copies(spec, gpus, host_dir)
    except OSError as e:
        _emit("failed", error=f"cannot create the copies' directories in {host_dir}: {e.strerror or e}")
        return 3
    where = _directory_id(host_dir)
    _emit("probed", gpus=gpus, states=states, cuda=probe.get("cuda"),
          build={k: probe.get(k) for k in ("version", "git_commit", "git_dirty")},
          cpus=[cpu_list(c.cpus) if c.cpus is not None else None for c in copies])
    metric = MetricSpec(**spec["metric"]) if spec.get("metric") else None
    progress = metric if metric and metric.method == "progress" else None
    meter = open_meter(spec, gpus)
    farm = Farm(spec["argv"], copies, os.environ, progress)
    commands = Commands(stdin, farm.abort)
    try:
        while True:
            line = commands.next()
            command = line.split() if line is not None else []
            if not command or command[0] == "end":
                break
            repetition = -1 if command[0] == "warmup" else int(command[1])
            sampler = MemorySampler(copies)
            farm.on_start = sampler.run_started
            sampler.start()
            timed = repetition >= 0 and meter is not None
            if timed and progress is None:
                meter.start()
            window = farm.window(repetition, 0.0 if repetition < 0 else spec["min_time_s"],
                                 meter if timed else None)
            if timed and progress is None:
                meter.stop()
            memory, memory_method = sampler.stop()
            energy = meter.result("the copies had no common window (progress)") if timed else None
            if farm.aborted.is_set():
                break  # the input ended during the window: the sweep has ended this configuration
            # What the runs left running must not time the next window: ended before it starts.
            left = window.left_running + end_strays(LEFTOVER_GRACE_S, skip_own_group=True)
            if _directory_id(host_dir) != where:
                _emit("failed", error=f"the run directory {host_dir} was removed or replaced during "
                                      f"{'the warm-up' if repetition < 0 else f'window {repetition + 1}'}: "
                                      "the runs' outputs are gone")
                return 3
            if spec.get("check"):
                check_runs(spec["check"], window.runs, os.environ)
            problems = read_rates(metric, window.runs) if metric else {}
            keep_only_useful_outputs(window.runs, problems)
            _emit("warm" if repetition < 0 else "window", repetition=repetition, window_s=window.window_s,
                  runs=_runs_json(window.runs, problems), memory_bytes=memory, memory_method=memory_method,
                  left_running=left, meter=energy)
    except Interrupted as e:
        farm.abort()
        return 128 + e.signum
    finally:
        stop.cleaning = True  # first: the cleanup must finish, whatever signal comes now
        if meter is not None:
            meter.close()
        end_strays(LEFTOVER_GRACE_S, skip_own_group=True)
    _emit("done")
    return 0


def main():
    stop = stop_signals.StopOnce()
    stop.install()
    if not die_with_parent(signal.SIGTERM):
        return 143  # the sweep's side is gone already
    become_subreaper()
    try:
        return serve(stop)
    except Interrupted as e:
        return 128 + e.signum


if __name__ == "__main__":
    sys.exit(main())
