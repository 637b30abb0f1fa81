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
- with --app-metric or --app-progress the program's own figure (figures.py) is the primary metric,
  `metric_per_s` in the program's unit; `run_per_s` stays in `aggregate` (and runs/hour in `app`);
  speedup, CV, noise and Jain's index follow the primary figure (Jain's over the copies' own rates);
- energy and gpu_activity: the meter's spans over the repetitions (energy.py).
The record's `app` object holds what is particular to an application: its name and command, the
binding, the runs per repetition, runs/hour, the run-time figures, the program's own figure
(`metric`: its source and per-copy figures), the start-up share, every failed run and check, the GPU
memory per copy and how it was found, and how many processes the runs left running that the farmer
ended after their window.
"""
import math
import shlex

from mpsbench_core import derivations, stats
from mpsbench_core.speedup import speedup_vs_one_per_gpu

from .energy import energy_records
from .figures import FigureError, counted, figures
from .meter import unavailable

FAILED_RUNS_KEPT = 10
RUNS = "run_per_s"
METRIC = "metric_per_s"


def run_place(run, host):
    """Which run: 'copy 0 on HOST, repetition 1 run 2' (or its warm-up run)."""
    where = "warm-up run" if run["repetition"] < 0 else f"repetition {run['repetition'] + 1} run {run['number'] + 1}"
    return f"copy {run['copy']} on {host}, {where}"


def describe_run(run, host):
    if run.get("start_error"):
        how = f"could not start: {run['start_error']}"
    elif run["signal"] is not None:
        how = f"was killed by signal {run['signal']}"
    else:
        how = f"exited with status {run['exit_code']}"
    return f"{run_place(run, host)}, {how}"


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
                 repetitions, metric=None, bind="none"):
        """metric: the MetricSpec of --app-metric/--app-progress, None for runs per second."""
        self.app, self.mode, self.k, self.thread_percentage = app, mode, k, thread_percentage
        self.device, self.copies_per_node, self.nodes = device, copies_per_node, nodes
        self.gpus_per_node, self.repetitions = gpus_per_node, repetitions
        self.metric, self.bind = metric, bind
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
                "primary_metric": METRIC if self.metric else RUNS}

    def _app_object(self, runs_per_repetition=None, run_times=None):
        events = self.all_run_events()
        obj = dict(self.app)
        memory, method = self._memory()
        obj.update({"bind": self.bind, "runs_per_repetition": runs_per_repetition or [], "runs_per_hour": None,
                    "run_time_s": None, "metric": self.metric.to_json() if self.metric else None,
                    "startup_share": None,
                    "failed_runs": failed_runs(events)[:FAILED_RUNS_KEPT],
                    "failed_checks": failed_checks(events)[:FAILED_RUNS_KEPT], "gpu_memory_bytes": memory,
                    "gpu_memory_method": method, "left_running": sum(e.get("left_running", 0) for e in events)})
        if run_times:
            obj["run_time_s"] = {"median": stats.median(run_times), "p95": stats.percentile(run_times, 95),
                                 "min": min(run_times), "max": max(run_times)}
        return obj

    def _memory(self):
        """(largest GPU memory per copy over the windows by global copy index, the method that gave it);
        (None, None) when no method saw anything. One method for the record: per process wherever it worked."""
        peak, methods = {}, set()
        for rep in self.windows:
            for node, event in enumerate(rep):
                if event.get("memory_bytes"):
                    methods.add(event.get("memory_method") or "nvidia-smi per process")
                for copy, used in (event.get("memory_bytes") or {}).items():
                    key = str(node * self.copies_per_node + int(copy))
                    peak[key] = max(peak.get(key, 0), used)
        if not peak:
            return None, None
        return peak, " + ".join(sorted(methods))

    def _figures(self):
        """The program's own figures (figures.py), or None; a FigureError fails the configuration."""
        if self.metric is None or self.error is not None or len(self.windows) < self.repetitions:
            return None
        try:
            return figures(self.metric, self.windows, self.copies_per_node)
        except FigureError as e:
            self.fail(str(e))
            return None

    def record(self, one_copy_median=None):
        """The results record: measured (status ok) or failed (nothing measured, `error` says why).
        one_copy_median: the primary figure of one copy per GPU in the same mode and binding."""
        r = self._base()
        if self.error is None and len(self.windows) < self.repetitions:
            self.fail("the configuration ended before its last repetition")
        own = self._figures()
        if self.error is not None:
            why = unavailable(f"the configuration failed: {self.error}")
            r.update({"app": self._app_object(), "status": "failed", "error": self.error,
                      "primary_unit": None, "window_s": [], "aggregate": None, "aggregate_cv": None,
                      "noise": _noise([]), "speedup_vs_one_copy_per_gpu": None, "jain_fairness": None,
                      "verified": False, "copies": [], "energy": why, "gpu_activity": dict(why)})
            return r
        windows = [max(e["window_s"] for e in rep) for rep in self.windows]
        runs = [sum(counted(run) for e in rep for run in e["runs"]) for rep in self.windows]
        run_samples = derivations.rate_samples(runs, windows)
        copies = self._copies(own)
        run_times = [run["duration_s"] for rep in self.windows for e in rep for run in e["runs"] if counted(run)]
        samples = own["samples"] if own else run_samples
        median = stats.median(samples)
        app = self._app_object(runs, run_times)
        app["runs_per_hour"] = derivations.runs_per_hour(stats.median(run_samples))
        aggregate = {RUNS: stats.summary(run_samples)}
        unit = self.metric.unit if self.metric else "run/s"
        if own:
            aggregate[METRIC] = stats.summary(samples)
            app["metric"] = self._metric_object(own, copies)
            app["startup_share"] = own.get("startup_share")
        energy, activity = energy_records(self.device, self.windows, unit)
        per_copy = [c["metric_per_s"]["median"] if own else c["throughput_per_s"] for c in copies]
        r.update({"app": app, "status": "ok", "error": None, "primary_unit": unit, "window_s": windows,
                  "aggregate": aggregate, "aggregate_cv": stats.coefficient_of_variation(samples),
                  "noise": _noise(samples),
                  "speedup_vs_one_copy_per_gpu": speedup_vs_one_per_gpu(self.k, median, one_copy_median),
                  "jain_fairness": stats.jain_fairness(per_copy),
                  "verified": all(c["check"]["ok"] for c in copies) and not app["failed_checks"],
                  "copies": copies, "energy": energy, "gpu_activity": activity})
        return r

    def _metric_object(self, own, copies):
        medians = [c["metric_per_s"]["median"] for c in copies]
        obj = dict(self.metric.to_json())
        obj.update({"copy_spread": derivations.copy_spread(medians),
                    "jain_fairness": stats.jain_fairness(medians) if medians else None,
                    "common_window_s": own.get("window_s"), "rated_runs": own.get("rated_runs"),
                    "unrated_runs": own.get("unrated_runs"), "least_shared": own.get("least_shared")})
        return obj

    def _copies(self, own=None):
        """One record per copy, global index = node order x copies per node + local index. own: the program's
        own figures (their per-copy rates and start-up times)."""
        out = []
        for node, probed in enumerate(self.probed):
            states = {s["uuid"]: s for s in probed["states"]}
            gpus = probed["gpus"]
            cpus = probed.get("cpus") or []
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
                    "check": {"ok": bad == 0, "checked_runs": len(checked), "failed_runs": bad},
                    "cpus": cpus[local] if local < len(cpus) else None})
                if own is not None:
                    index = node * self.copies_per_node + local
                    rates, startup = own["per_copy"].get(index), (own.get("startup_s") or {}).get(index)
                    out[-1]["metric_per_s"] = stats.summary(rates) if rates else None
                    out[-1]["startup_s"] = stats.summary(startup) if startup else None
        return out


def app_identity(argv, name, launcher, check, warmup, metric=None):
    """What identifies the farmed program (context.sweep.app and each record's app object). metric: the
    MetricSpec of its own figure, None for runs per second."""
    return {"name": name, "command": list(argv), "command_line": shlex.join(argv), "launcher": launcher,
            "check": list(check) if check else None, "warmup": warmup,
            "metric": metric.to_json() if metric else None}
