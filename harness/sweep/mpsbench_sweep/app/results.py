"""An application configuration's figures, as a results record of kind "app" (schema: app_result).

From what the farmers reported (per node: the probe, the warm-up, one window per repetition) to one
`results[]` record:
- a repetition's throughput is its counted runs (every copy, every node, each run whole and exited
  0, its --app-check passed) over its window (the longest node's), in runs/s; `aggregate.run_per_s`
  summarises the repetitions;
- a copy's `throughput_per_s` is its counted runs over the time those runs took (runs per busy
  second); Jain's fairness index is taken over those;
- run times are every counted run's duration: median, p95, min, max (mpsbench_core.stats, the
  definitions the analysis uses too);
- `verified`: every run that exited 0, warm-up included, passed --app-check; each copy's `check`
  counts the same runs, so `verified` is true exactly when every copy's check is ok.
The record's `app` object holds what is particular to an application: its name and command, the
runs per repetition, runs/hour, the run-time figures, every failed run and check, and how many
processes the runs left running that the farmer ended after their window.
"""
import math
import shlex

from mpsbench_core import stats

FAILED_RUNS_KEPT = 10
PRIMARY = "run_per_s"


def counted(run):
    """A run counts when it ended with status 0 and its --app-check (if any) passed."""
    return run["exit_code"] == 0 and run.get("check_exit_code") in (None, 0)


def describe_run(run, host):
    if run.get("start_error"):
        how = f"could not start: {run['start_error']}"
    elif run["signal"] is not None:
        how = f"was killed by signal {run['signal']}"
    else:
        how = f"exited with status {run['exit_code']}"
    where = "warm-up run" if run["repetition"] < 0 else f"repetition {run['repetition'] + 1} run {run['number'] + 1}"
    return f"copy {run['copy']} on {host}, {where}, {how}"


def failed_runs(node_events):
    """Runs that failed (not those we stopped because another had failed), with the end of their stderr."""
    return [{"host": e["host"], "copy": r["copy"], "repetition": r["repetition"], "run": r["number"],
             "exit_code": r["exit_code"], "signal": r["signal"], "stderr_tail": r.get("stderr_tail", ""),
             "what": describe_run(r, e["host"])}
            for e in node_events for r in e["runs"] if r["exit_code"] != 0 and not r["stopped"]]


def failed_check(run):
    return run["exit_code"] == 0 and run.get("check_exit_code") not in (None, 0)


def failed_checks(node_events):
    return [{"host": e["host"], "copy": r["copy"], "repetition": r["repetition"], "run": r["number"],
             "check_exit_code": r["check_exit_code"], "stdout": r["stdout"]}
            for e in node_events for r in e["runs"] if failed_check(r)]


def _noise(samples):
    relative = stats.relative_noise(samples) if samples else math.nan
    return {"estimator": stats.NOISE_ESTIMATOR, "relative": relative if math.isfinite(relative) else None,
            "target": None, "met": None}


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
        return {"kind": "app", "app": None, "mode": self.mode, "mps_active_thread_percentage": self.thread_percentage,
                "ranks_per_gpu": self.k, "device": self.device,
                "devices": max(1, self.gpus_per_node * self.nodes) if self.device == "gpu" else self.nodes,
                "active_ranks": self.copies_per_node * self.nodes, "repetitions": self.repetitions,
                "primary_metric": PRIMARY}

    def _app_object(self, runs_per_repetition=None, run_times=None):
        events = self.all_run_events()
        obj = dict(self.app)
        obj.update({"runs_per_repetition": runs_per_repetition or [], "runs_per_hour": None, "run_time_s": None,
                    "failed_runs": failed_runs(events)[:FAILED_RUNS_KEPT],
                    "failed_checks": failed_checks(events)[:FAILED_RUNS_KEPT], "gpu_memory_bytes": self._memory(),
                    "left_running": sum(e.get("left_running", 0) for e in events)})
        if run_times:
            obj["run_time_s"] = {"median": stats.median(run_times), "p95": stats.percentile(run_times, 95),
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
            r.update({"app": self._app_object(), "status": "failed", "error": self.error, "primary_unit": None,
                      "window_s": [], "aggregate": None, "aggregate_cv": None, "noise": _noise([]),
                      "speedup_vs_one_copy_per_gpu": None, "jain_fairness": None, "verified": False, "copies": []})
            return r
        windows = [max(e["window_s"] for e in rep) for rep in self.windows]
        runs = [sum(counted(run) for e in rep for run in e["runs"]) for rep in self.windows]
        samples = [n / w if w > 0 else 0.0 for n, w in zip(runs, windows)]
        copies = self._copies()
        run_times = [run["duration_s"] for rep in self.windows for e in rep for run in e["runs"] if counted(run)]
        median = stats.median(samples)
        app = self._app_object(runs, run_times)
        app["runs_per_hour"] = median * 3600.0
        r.update({"app": app, "status": "ok", "error": None, "primary_unit": "run/s", "window_s": windows,
                  "aggregate": {PRIMARY: stats.summary(samples)},
                  "aggregate_cv": stats.coefficient_of_variation(samples), "noise": _noise(samples),
                  "speedup_vs_one_copy_per_gpu": median / one_copy_median if one_copy_median else None,
                  "jain_fairness": stats.jain_fairness([c["throughput_per_s"] for c in copies]),
                  "verified": all(c["check"]["ok"] for c in copies) and not app["failed_checks"],
                  "copies": copies})
        return r

    def _copies(self):
        """One record per copy, global index = node order x copies per node + local index."""
        out = []
        for node, probed in enumerate(self.probed):
            states = {s["uuid"]: s for s in probed["states"]}
            gpus = probed["gpus"]
            warm = self.warm[node]["runs"] if node < len(self.warm) else []
            for local in range(self.copies_per_node):
                mine = [[run for run in rep[node]["runs"] if run["copy"] == local] for rep in self.windows]
                good = [[run for run in rep if counted(run)] for rep in mine]
                per_rep = [stats.mean([run["duration_s"] for run in rep]) for rep in good if rep]
                busy = sum(run["duration_s"] for rep in good for run in rep)
                gpu = gpus[local % len(gpus)] if gpus else None
                state = states.get(gpu["uuid"], {}) if gpu else {}
                checked = [run for rep in mine for run in rep if run.get("check_exit_code") is not None]
                checked += [run for run in warm if run["copy"] == local and run.get("check_exit_code") is not None]
                bad = sum(run["check_exit_code"] != 0 for run in checked)
                out.append({
                    "copy": node * self.copies_per_node + local, "host": probed["host"], "local_copy": local,
                    "gpu_index": local % len(gpus) if gpu else -1, "gpu_uuid": gpu["uuid"] if gpu else "",
                    "mps_enabled": state.get("mps_enabled"), "sm_count": state.get("sm_count"),
                    "runs": sum(len(rep) for rep in good),
                    "run_time_s": stats.summary(per_rep) if per_rep else None,
                    "throughput_per_s": sum(len(rep) for rep in good) / busy if busy > 0 else 0.0,
                    "check": {"ok": bad == 0, "checked_runs": len(checked), "failed_runs": bad}})
        return out


def app_identity(argv, name, launcher, check, warmup):
    return {"name": name, "command": list(argv), "command_line": shlex.join(argv), "launcher": launcher,
            "check": list(check) if check else None, "warmup": warmup}
