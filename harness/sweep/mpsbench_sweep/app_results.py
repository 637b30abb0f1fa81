"""An application configuration's figures, as a record of the mpsbench results schema.

From what the farmers reported (per node: the probe, the warm-up, one window
per repetition) to one `results[]` record with kernel `app`, so the console
table and every mpsbench-analyze command read it like a built-in kernel's:
- a repetition's throughput is its completed runs (every copy, every node,
  each run whole, --app-check passed) over its window (the longest node's),
  in runs/s; `aggregate.item_per_s` summarises the repetitions, item `run`;
- a copy's `throughput_per_s` is its runs over the time those runs took (runs
  per busy second), and Jain's fairness index is taken over those;
- run times are every counted run's duration: median, p95 (linear
  interpolation between order statistics, as numpy's default), min, max.
The record's `app` object holds what is particular to an application: its
name and command, the runs per repetition, runs/hour, the run-time figures,
every failed run with its copy, exit status and the end of its stderr.
"""
import shlex
import statistics

FAILED_RUNS_KEPT = 10


def summary(samples):
    return {"median": statistics.median(samples), "min": min(samples), "max": max(samples),
            "samples": list(samples)}


def percentile(values, q):
    """Linear interpolation between order statistics (numpy's default method)."""
    ordered = sorted(values)
    position = (len(ordered) - 1) * q / 100.0
    low = int(position)
    high = min(low + 1, len(ordered) - 1)
    return ordered[low] + (ordered[high] - ordered[low]) * (position - low)


def coefficient_of_variation(samples):
    if len(samples) < 2:
        return 0.0
    mean = statistics.fmean(samples)
    return statistics.stdev(samples) / abs(mean) if mean else 0.0


def jain(values):
    total = sum(values)
    squares = sum(v * v for v in values)
    return total * total / (len(values) * squares) if squares else 1.0


def counted(run):
    """A run counts when it ended with status 0 and its --app-check (if any) passed."""
    return run["exit_code"] == 0 and run.get("check_exit_code") in (None, 0)


def describe_run(run, host):
    if run["signal"] is not None:
        how = f"was killed by signal {run['signal']}"
    else:
        how = f"exited with status {run['exit_code']}"
    where = "warm-up run" if run["repetition"] < 0 else f"repetition {run['repetition'] + 1} run {run['number'] + 1}"
    return f"copy {run['copy']} on {host}, {where}, {how}"


def failed_runs(node_events):
    """Runs that failed (not those we stopped because another had failed), with the end of their stderr."""
    out = []
    for event in node_events:
        for run in event["runs"]:
            if run["exit_code"] != 0 and not run["stopped"]:
                out.append({"host": event["host"], "copy": run["copy"], "repetition": run["repetition"],
                            "run": run["number"], "exit_code": run["exit_code"], "signal": run["signal"],
                            "stderr_tail": run.get("stderr_tail", ""), "what": describe_run(run, event["host"])})
    return out


def failed_checks(node_events):
    return [{"host": e["host"], "copy": r["copy"], "repetition": r["repetition"], "run": r["number"],
             "check_exit_code": r["check_exit_code"], "stdout": r["stdout"]}
            for e in node_events for r in e["runs"] if r["exit_code"] == 0 and r.get("check_exit_code") not in (None, 0)]


class AppConfiguration:
    """Everything known about one (mode, k[, percentage]) of an application."""

    def __init__(self, *, app, mode, k, thread_percentage, device, copies_per_node, nodes, gpus_per_node,
                 repetitions):
        self.app, self.mode, self.k, self.thread_percentage = app, mode, k, thread_percentage
        self.device, self.copies_per_node, self.nodes = device, copies_per_node, nodes
        self.gpus_per_node, self.repetitions = gpus_per_node, repetitions
        self.probed = []        # per node: {"host", "gpus", "states"}
        self.warm = []          # per node: the warm event
        self.windows = []       # per repetition: [window event per node]
        self.error = None       # why the configuration failed (one line), None when it did not

    def all_run_events(self):
        return self.warm + [e for rep in self.windows for e in rep]

    def fail(self, message):
        if self.error is None:
            self.error = message

    def _base(self):
        return {"kernel": "app", "precision": self.app["name"], "size": None, "ranks_per_gpu": self.k, "params": {},
                "device": self.device, "mode": self.mode, "mps_active_thread_percentage": self.thread_percentage,
                "active_ranks": self.copies_per_node * self.nodes,
                "devices": max(1, self.gpus_per_node * self.nodes) if self.device == "gpu" else self.nodes,
                "instances_per_rank": 1, "repetitions": self.repetitions, "primary_metric": "item_per_s",
                # schema 2: an application's runs have no request latency, host collective or tenants
                "latency": None, "collective": None, "tenants": None}

    def _app_object(self, runs_per_repetition=None, run_times=None):
        events = self.all_run_events()
        obj = dict(self.app)
        obj.update({"runs_per_repetition": runs_per_repetition or [], "runs_per_hour": None, "run_time_s": None,
                    "failed_runs": failed_runs(events)[:FAILED_RUNS_KEPT], "failed_checks": failed_checks(events)[
                        :FAILED_RUNS_KEPT], "gpu_memory_bytes": self._memory()})
        if run_times:
            obj["run_time_s"] = {"median": statistics.median(run_times), "p95": percentile(run_times, 95),
                                 "min": min(run_times), "max": max(run_times)}
        return obj

    def _memory(self):
        """Largest GPU memory per copy over the windows, by global copy index (None when nvidia-smi saw none)."""
        peak = {}
        for rep in self.windows:
            for node, event in enumerate(rep):
                for copy, used in (event.get("memory_bytes") or {}).items():
                    key = str(node * self.copies_per_node + int(copy))
                    peak[key] = max(peak.get(key, 0), used)
        return peak or None

    def record(self, one_copy_median=None):
        """The results record: measured (status ok) or failed (nothing measured, `error` says why)."""
        r = self._base()
        if self.error is None and len(self.windows) < self.repetitions:
            self.fail("the configuration ended before its last repetition")
        if self.error is not None:
            r.update({"status": "failed", "error": self.error, "iterations_per_repetition": None,
                      "work_per_iteration": None, "primary_unit": None, "window_s": [], "aggregate": None,
                      "aggregate_cv": None, "speedup_vs_one_rank_per_gpu": None, "jain_fairness": None,
                      "verified": False, "max_rel_error": None, "ranks": [], "app": self._app_object()})
            return r
        windows = [max(e["window_s"] for e in rep) for rep in self.windows]
        runs = [sum(counted(run) for e in rep for run in e["runs"]) for rep in self.windows]
        samples = [n / w if w > 0 else 0.0 for n, w in zip(runs, windows)]
        zeros = summary([0.0] * len(samples))
        ranks = self._copies()
        run_times = [run["duration_s"] for rep in self.windows for e in rep for run in e["runs"] if counted(run)]
        median = statistics.median(samples)
        app = self._app_object(runs, run_times)
        app["runs_per_hour"] = median * 3600.0
        r.update({"status": "ok", "error": None, "iterations_per_repetition": None,
                  "work_per_iteration": {"flop": 0, "byte": 0, "items": 1, "item_unit": "run"},
                  "primary_unit": "run/s", "window_s": windows,
                  "aggregate": {"flop_per_s": zeros, "byte_per_s": zeros, "item_per_s": summary(samples)},
                  "aggregate_cv": coefficient_of_variation(samples),
                  "speedup_vs_one_rank_per_gpu": median / one_copy_median if one_copy_median else None,
                  "jain_fairness": jain([c["throughput_per_s"] for c in ranks]),
                  "verified": not app["failed_checks"], "max_rel_error": None, "ranks": ranks, "app": app})
        return r

    def _copies(self):
        """One `ranks[]` record per copy, global index = node order x copies per node + local index."""
        out = []
        for node, probed in enumerate(self.probed):
            states = {s["uuid"]: s for s in probed["states"]}
            for local in range(self.copies_per_node):
                mine = [[run for run in rep[node]["runs"] if run["copy"] == local] for rep in self.windows]
                good = [run for rep in mine for run in rep if counted(run)]
                per_rep = [statistics.fmean(run["duration_s"] for run in rep) if rep else 0.0 for rep in mine]
                busy = sum(run["duration_s"] for run in good)
                gpu = probed["gpus"][local % len(probed["gpus"])] if probed["gpus"] else None
                state = states.get(gpu["uuid"], {}) if gpu else {}
                checked = [run for rep in mine for run in rep if run.get("check_exit_code") is not None]
                bad = [run for run in checked if run["check_exit_code"] != 0]
                times = [run["duration_s"] for run in good] or [0.0]
                out.append({
                    "rank": node * self.copies_per_node + local, "instance": 0, "host": probed["host"],
                    "local_rank": local, "gpu_index": local % len(probed["gpus"]) if gpu else -1,
                    "gpu_uuid": gpu["uuid"] if gpu else "", "mps_enabled": state.get("mps_enabled"),
                    "sm_count": state.get("sm_count"), "iteration_time_s": summary(per_rep),
                    "gpu_iteration_time_s": None, "throughput_per_s": len(good) / busy if busy > 0 else 0.0,
                    "verification": {"ok": not bad, "max_rel_error": None, "tolerance": 0,
                                     "checked_values": len(checked),
                                     "detail": f"--app-check failed on {len(bad)} of {len(checked)} runs" if bad
                                     else ""},
                    "kernel_details": {"runs": float(len(good)), "run_time_median_s": statistics.median(times),
                                       "run_time_p95_s": percentile(times, 95), "run_time_min_s": min(times),
                                       "run_time_max_s": max(times)},
                    "latency_s": None, "collective_time_s": None, "tenant": None})
        return out


def app_identity(argv, name, launcher, check, warmup):
    return {"name": name, "command": list(argv), "command_line": shlex.join(argv), "launcher": launcher,
            "check": list(check) if check else None, "warmup": warmup}
