"""The client ramp (--client-ramp): how many MPS clients share one GPU, and what each one costs.

Mode mps, one job per k = 1, 2, 4, ... clients per GPU up to the MPS client
limit, then the limit itself and one past it (plan.ramp_steps), with a small
problem (presets/client-ramp.json) so that many ranks start quickly and fit in
memory. Each step records the aggregate throughput (the job's results at k),
the GPU memory of each rank's context (mpsbench's context.ranks) and the MPS
server's peak (nvidia-smi, as for every MPS job). The step past the limit is
expected to fail: the server refuses the client context past the limit (or the
client waits, and --timeout ends the job); that failure, with the job's error
text, is the ramp's finding and not an error of the sweep. A step that fails
within the limit stops the sweep as any failed job does.

Everything is in context.sweep.client_ramp of the merged file and of
WORKDIR/sweep.json: limit, limit_source, server_reported_limit, steps[] (one
per job run), finding.
"""
import statistics
from dataclasses import replace

from mpsbench_core.units import format_si

from ..daemon.mps_daemon import control
from ..inputs import decimal_or_none
from ..plan import Plan, plan_ramp
from ..text import printable, say
from .mpsbench_job import MpsbenchRun
from .outcome import Stop

GET_LIMIT_COMMAND = "get_default_client_limit"


class RampState:
    """What the ramp has found so far: context.sweep.client_ramp."""

    def __init__(self, ramp_settings):
        self.settings = ramp_settings
        self.record = {"limit": ramp_settings.limit, "limit_source": ramp_settings.reason,
                       "server_reported_limit": None, "steps": [], "finding": None}

    def add_step(self, job, record, doc, tail, timeout):
        self.record["steps"].append(step(job, record, doc, tail, timeout))
        self.record["finding"] = finding(self.record)

    def replan(self, plan, control_path, daemon, nodes, gpus_per_node):
        """The plan after asking the daemon for its client limit: the same plan when it does not answer, says
        the same, or --mps-client-limit was given; else a new plan ramping to the daemon's limit, recorded as
        such (no job has run yet: the ramp is the only mode)."""
        rc, out = control(control_path, GET_LIMIT_COMMAND, daemon["pipe_dir"], timeout=5.0)
        reported = parse_limit(out) if rc == 0 else None
        self.record["server_reported_limit"] = reported
        limit = self.record["limit"]
        if reported is None or reported == limit:
            return plan
        if self.settings.explicit:
            say(f"client ramp: the MPS daemon reports a client limit of {reported} per GPU; ramping to "
                f"--mps-client-limit {limit} as asked")
            return plan
        say(f"client ramp: the MPS daemon reports a client limit of {reported} per GPU (not {limit}): "
            f"ramping to {reported} and {reported + 1}")
        jobs = plan_ramp(reported, nodes, gpus_per_node)
        self.record.update(limit=reported, limit_source=f"the daemon's answer to {GET_LIMIT_COMMAND}")
        return Plan(jobs, replace(plan.record, mps_client_limit=reported, ranks_per_gpu=tuple(j.k for j in jobs)))


class RampStepRun(MpsbenchRun):
    """A step of the ramp: an mpsbench job whose failure past the limit is the ramp's finding, not an error."""

    def __init__(self, job, record, settings, daemon, state, on_step):
        super().__init__(job, record, settings, daemon)
        self.state, self.on_step = state, on_step

    def judge(self):
        try:
            super().judge()
        except Stop:
            if not self.job.past_limit:
                raise
            self.record["expected_failure"] = True
        finally:
            self.state.add_step(self.job, self.record, self.doc, self.tail, self.s.timeout)
            self.on_step()
        if self.record.get("expected_failure"):
            say(f"{self.label}: {self.record['status']} one past the MPS client limit, recorded as the ramp's last "
                f"step: {self.state.record['steps'][-1]['error']}")


def parse_limit(answer):
    """The control program's answer to GET_LIMIT_COMMAND as a positive integer, or None (an older daemon
    answers with an error message, or not at all)."""
    words = (answer or "").split()
    value = decimal_or_none(words[0]) if len(words) == 1 else None
    return value if value else None


def step(job, record, doc, tail, timeout):
    """One ramp step from the job's record, its part (None when it left none) and the last lines of stderr."""
    k = job.ranks_per_gpu[0]
    results = []
    for r in (doc or {}).get("results", []):
        if r.get("ranks_per_gpu") != k:
            continue
        ok = r.get("status", "ok") == "ok"
        metric = r.get("primary_metric")
        results.append({"kernel": r.get("kernel"), "precision": r.get("precision"), "size": r.get("size"),
                        "metric": metric, "unit": r.get("primary_unit"), "status": r.get("status", "ok"),
                        "verified": r.get("verified"),
                        "aggregate_median": r["aggregate"][metric]["median"] if ok else None})
    per_rank = [x["context_memory_bytes"] for x in record.get("ranks") or [] if x.get("context_memory_bytes")]
    error = None
    if record["status"] != "ok":
        said = record.get("error") or " / ".join(list(tail)[-3:])
        parts = [f"still running after --timeout {timeout:g} s, killed"] if record["status"] == "timeout" else []
        parts += [said] if said else []
        error = "; ".join(parts) or f"{record['status']}, exit status {record.get('exit_code')}"
    return {"clients_per_gpu": k, "ranks": job.np, "past_limit": job.past_limit, "status": record["status"],
            "exit_code": record.get("exit_code"), "error": error, "wall_s": record.get("wall_s"),
            "results": results,
            "context_memory_bytes_median": int(statistics.median(per_rank)) if per_rank else None,
            "context_memory_bytes_max": max(per_rank) if per_rank else None,
            "mps_server_memory_bytes": (record.get("daemon") or {}).get("mps_server_memory_bytes")}


def finding(ramp):
    """One sentence: what the ramp found (None before any step ran)."""
    steps = ramp["steps"]
    if not steps:
        return None
    limit, source = ramp["limit"], ramp["limit_source"]
    ran = [s["clients_per_gpu"] for s in steps if s["status"] == "ok"]
    most = f"{max(ran)} clients per GPU ran" if ran else "no step ran"
    last = steps[-1]
    if last["past_limit"]:
        if last["status"] == "ok":
            return (f"{most}, {last['clients_per_gpu']} too: the server accepts more than the limit of {limit} "
                    f"({source}); pass a larger --mps-client-limit to ramp further")
        return (f"{most}; {last['clients_per_gpu']} (one past the limit of {limit}, {source}) failed as a recorded "
                f"step ({last['status']}): {last['error']}")
    if last["status"] not in ("ok", "verification_failed"):
        return (f"{most}; the ramp stopped at {last['clients_per_gpu']} clients per GPU ({last['status']}): "
                f"{last['error']}")
    return f"{most}; the ramp did not reach the step past the limit of {limit}"


def _mib(value):
    return "-" if value is None else f"{value / 2**20:.0f} MiB"


def table(ramp):
    """The per-step table for the console."""
    steps = ramp["steps"]
    head = (f"client ramp (mode mps): MPS client limit {ramp['limit']} per GPU ({ramp['limit_source']}); "
            f"steps {', '.join(str(s['clients_per_gpu']) for s in steps)}")
    if not steps:
        return head + "\nno step ran"
    configs = list(dict.fromkeys((r["kernel"], r["precision"], r["size"]) for s in steps for r in s["results"]))
    lines = [["clients/GPU", "ranks", "status", "throughput", "per rank", "context/rank", "MPS server", "error"]]
    for s in steps:
        values = [r for r in s["results"] if r["aggregate_median"] is not None]
        through = " / ".join(format_si(r["aggregate_median"], r["unit"]) for r in values) or "-"
        per_rank = " / ".join(format_si(r["aggregate_median"] / s["ranks"], r["unit"]) for r in values) or "-"
        error = printable(s["error"] or "")
        lines.append([str(s["clients_per_gpu"]) + (" (past)" if s["past_limit"] else ""), str(s["ranks"]),
                      s["status"], through, per_rank, _mib(s["context_memory_bytes_median"]),
                      _mib(s["mps_server_memory_bytes"]), error[:160] + ("..." if len(error) > 160 else "")])
    widths = [max(len(l[i]) for l in lines) for i in range(len(lines[0]))]
    text = ["  ".join(c.ljust(w) if i in (2, 7) else c.rjust(w) for i, (c, w) in enumerate(zip(l, widths))).rstrip()
            for l in lines]
    notes = ["throughput: aggregate median over the step's ranks; per rank: that divided by the ranks; context/rank: "
             "median GPU memory of one rank's context (mpsbench); MPS server: its peak GPU memory (nvidia-smi, "
             "'-' where it shows none)"]
    if len(configs) > 1:
        notes.append("several configurations per step, in this order: "
                     + printable(", ".join(f"{k} {p} {s}" for k, p, s in configs)))
    found = finding(ramp)
    return "\n".join([head] + text + [""] + notes + ([f"client ramp: {found}"] if found else []))
