"""Which jobs a sweep runs: one per mode, or one per setting where a mode's label carries one.

What a mode needs comes from the sharing-mode registry (mpsbench_core.modes), not from its name:
- a mode whose instances share one process (Mode.one_process: streams, green) runs one rank per
  GPU, which holds the k instances;
- a mode labelled by the thread percentage (mps-qos) runs one job per (ranks per GPU, percentage):
  CUDA_MPS_ACTIVE_THREAD_PERCENTAGE is a per-process setting, so each job has exactly k ranks per
  GPU;
- a mode labelled by the pinned memory limit (mps-mem) runs one job per limit; the limit is the
  same for every k, so one job covers all of them;
- every other mode runs one job over every k;
- the client ramp (--client-ramp) runs mps once per k up to the MPS client limit and once past it.
Every job runs mpsbench --mode Mode.engine_mode (mps-mem's ranks are plain MPS clients).

Rounds (--rounds R): every job runs R times, each time in processes of its own, and the plan is in run
order: round 0's jobs, then round 1's, ... with the modes of round r in mpsbench_core.round_order's
mode_order, so that a drift of the host over the sweep falls on every mode alike. The built-in kernels
run, per round, each mode's jobs together (mps-qos: its per-k jobs in k order); a farmed application
runs, per round, for each (binding, k) every mode, so the configurations compared with each other (mps
against timeslice at the same k) run next to each other in time, and k=1, every speedup's baseline,
first. The client ramp measures one round. With R > 1 a part file's name ends in its round (-rN,
from 0, as the records' `round`); with one round the names are those of a sweep without rounds.
"""
import re
from dataclasses import dataclass, replace
from typing import Optional, Tuple

from mpsbench_core import modes as registry
from mpsbench_core.round_order import mode_order
from mpsbench_core.sweep_settings import SweepRecord

from .inputs import InputError, integer, items
from .text import quoted

QOS_FIELD = "mps_active_thread_percentage"
MEM_FIELD = "mps_pinned_device_mem_limit"
# mpsbench's limit on a mix tenant's ranks per GPU (options.cpp, parse_mix).
MAX_TENANT_RANKS = 1024
MEM_LIMIT = re.compile(r"([1-9][0-9]{0,15})([KMG])(B?)", re.ASCII | re.IGNORECASE)
MEM_UNITS = {"K": 2**10, "M": 2**20, "G": 2**30}
DEFAULT_ROUNDS = 2  # the least that measures the spread between processes, the large one
# Each round repeats every job; 20 bounds what a typo costs and is more than the intervals need.
MAX_ROUNDS = 20


@dataclass(frozen=True)
class Job:
    index: int
    mode: str
    ranks_per_gpu: Tuple[int, ...]
    np: int
    thread_percentage: Optional[int]
    part_name: str
    mem_limit: Optional[str] = None  # mps-mem: the CUDA_MPS_PINNED_DEVICE_MEM_LIMIT value per device ("2G")
    ramp: bool = False               # a step of the client ramp (--client-ramp): mode mps at one k
    past_limit: bool = False         # the ramp's step past the MPS client limit: its failure is the finding
    mix: bool = False                # --mix after --: the mix sets mpsbench's ranks per GPU itself
    app: bool = False                # a configuration of a farmed application (--app)
    bind: str = "none"               # --app-bind: how its copies are pinned to CPUs
    round: int = 0                   # --rounds: which round this run of the job belongs to (from 0)
    rounds: int = 1                  # how many rounds the sweep runs
    turn_group: Optional[int] = None  # --turns: the jobs with this number run at once, taking turns (turns.py)

    @property
    def k(self):
        return self.ranks_per_gpu[0]

    def mpsbench_args(self, part_path, turns=None):
        """The options the sweep owns for this job; they go last on mpsbench's command line (passthrough.py).
        turns: the socket of the job's turns (turns.py) when it runs in a group."""
        ranks = [] if self.mix else ["--ranks-per-gpu", ",".join(map(str, self.ranks_per_gpu))]
        return (["--mode", registry.BY_NAME[self.mode].engine_mode] + ranks + ["--output", part_path]
                + (["--turns", turns] if turns else []))

    def label(self):
        """What the terminal, the job record and the time profile call this run of the job."""
        return self.setting_label() + (f", round {self.round + 1} of {self.rounds}" if self.rounds > 1 else "")

    def setting_label(self):
        """What the job measures: the same in every round."""
        if self.app or self.ramp:
            return (f"{self.mode} k={self.k}" + (f" {self.thread_percentage}%" if self.thread_percentage else "")
                    + (f" bind={self.bind}" if self.bind != "none" else "")
                    + (" (past the limit)" if self.past_limit else ""))
        if self.thread_percentage is not None:
            return f"{self.mode} k={self.k} {self.thread_percentage}%"
        if self.mem_limit is not None:
            return f"{self.mode} {self.mem_limit}"
        return self.mode


@dataclass(frozen=True)
class Plan:
    """The jobs the runner runs, and what context.sweep records of the settings. The client ramp, told the
    client limit by the daemon, makes a new Plan (jobs/ramp.py) rather than changing the settings."""

    jobs: Tuple[Job, ...]
    record: SweepRecord


def parse_mem_limits(text):
    """--mem-limits: values such as 2G, 512M, 512MB (K, M, G; an optional B), ascending by size, duplicates
    (by size) dropped. The text is passed on as written (upper case), since CUDA_MPS_PINNED_DEVICE_MEM_LIMIT
    reads the suffixes itself; sizes are counted in binary multiples (1G = 2^30 bytes) only to sort them."""
    out = {}
    for item in items("--mem-limits", text):
        m = MEM_LIMIT.fullmatch(item)
        if m is None:
            raise InputError(f"--mem-limits: {quoted(item)} is not a memory size with a K, M or G suffix "
                             "(e.g. 2G, 512M)")
        out.setdefault(int(m.group(1)) * MEM_UNITS[m.group(2).upper()], item.upper())
    return [out[size] for size in sorted(out)]


def mem_limit_bytes(limit):
    m = MEM_LIMIT.fullmatch(limit or "")
    return int(m.group(1)) * MEM_UNITS[m.group(2).upper()] if m else 0


def mem_limit_env(limit, ordinals):
    """CUDA_MPS_PINNED_DEVICE_MEM_LIMIT for every device ordinal of the node: "0=2G,1=2G" (NVIDIA's MPS docs:
    comma-separated DEVICE=LIMIT pairs, device ordinals as the client enumerates them)."""
    return ",".join(f"{i}={limit}" for i in range(ordinals))


def mix_ranks(text):
    """The active ranks per GPU of mpsbench's --mix TENANT:RANKS,...: the sum of its tenants' ranks, each in
    [1, 1024], at least two tenants, as mpsbench allows (mpsbench checks the tenants themselves)."""
    tenants = items("--mix after --", text)
    if len(tenants) < 2:
        raise InputError(f"--mix after --: {quoted(text)} names one tenant; a mix needs at least two")
    total = 0
    for item in tenants:
        _, sep, ranks = item.rpartition(":")
        if not sep:
            raise InputError(f"--mix after --: {quoted(item)} is not TENANT:RANKS (e.g. matmul:4,inference:4)")
        total += integer(f"--mix after --, tenant {quoted(item)}", ranks, 1, MAX_TENANT_RANKS)
    return total


def in_run_order(runs, rounds):
    """(job, round) pairs in the order they run -> the plan's jobs: numbered in that order, each with its round
    and, with several rounds, the round in its part file's name (part-mps-r1.json)."""
    return tuple(replace(job, index=i, round=r, rounds=rounds,
                         part_name=(job.part_name[:-len(".json")] + f"-r{r}.json") if rounds > 1 else job.part_name)
                 for i, (job, r) in enumerate(runs))


def plan_jobs(modes, ranks, qos_percentages, nodes, gpus_per_node, mem_limits=None, mix=False, rounds=1):
    """Per round, each mode's jobs in the round's mode order; part files are named part-MODE[-kK][-pP].json,
    part-MODE-LIMIT.json (plus -rN with several rounds). mix: the ranks per GPU are those of mpsbench's --mix
    (one value, the tenants' sum), which mpsbench sets itself."""
    ranks = tuple(ranks)

    def job(mode, ks, per_gpu, percentage, part, limit=None):
        return Job(0, mode, tuple(ks), nodes * gpus_per_node * per_gpu, percentage, part, limit, mix=mix)

    by_mode = {}
    for name in modes:
        mode = registry.BY_NAME[name]
        if mode.label_field == MEM_FIELD:
            by_mode[name] = [job(name, ranks, max(ranks), None, f"part-{name}-{limit}.json", limit)
                             for limit in mem_limits or []]
        elif mode.label_field == QOS_FIELD:
            by_mode[name] = [job(name, [k], k, p, f"part-{name}-k{k}-p{p}.json")
                             for k in ranks for p in (qos_percentages or [max(1, 100 // k)])]
        else:
            by_mode[name] = [job(name, ranks, 1 if mode.one_process else max(ranks), None, f"part-{name}.json")]
    return in_run_order([(j, r) for r in range(rounds) for name in mode_order(modes, r) for j in by_mode[name]],
                        rounds)


def with_turns(jobs):
    """--turns on: each round's jobs of the built-in kernels run at once, taking turns of one configuration
    (turns.py), numbered as groups. A group holds one job per mode, at most one mode with an MPS daemon (the
    daemon serves its clients; the others' ranks get an empty pipe directory), and modes whose jobs are not
    one per round (mps-qos, mps-mem) run on their own; a group of one is no group."""
    out, current, number = [], [], 0

    def flush():
        nonlocal current, number
        if len(current) > 1:
            out.extend(replace(j, turn_group=number) for j in current)
            number += 1
        else:
            out.extend(current)
        current = []

    def mps(job):
        return job.mode in registry.MPS_MODES

    for job in jobs:
        if job.app or job.ramp or registry.BY_NAME[job.mode].label_field is not None:
            flush()
            out.append(job)
            continue
        if current and (job.round != current[0].round or any(j.mode == job.mode for j in current)
                        or (mps(job) and any(mps(j) for j in current))):
            flush()
        current.append(job)
    flush()
    return tuple(out)


def ramp_steps(limit):
    """Clients per GPU of the client ramp: 1, 2, 4, ... below the limit, the limit, and one past it."""
    steps, k = [], 1
    while k < limit:
        steps.append(k)
        k *= 2
    return steps + [limit, limit + 1]


def plan_ramp(limit, nodes, gpus_per_node):
    """The client ramp: mode mps, one job per k (part-mps-kK.json); the last one is past the limit."""
    return tuple(Job(i, "mps", (k,), nodes * gpus_per_node * k, None, f"part-mps-k{k}.json", ramp=True,
                     past_limit=k > limit) for i, k in enumerate(ramp_steps(limit)))


def plan_app_jobs(modes, ranks, qos_percentages, copies_total_per_k, binds=("none",), rounds=1):
    """One job per (mode, binding, copies per GPU[, percentage]) and round:
    part-app-MODE-kK[-pP][-bind-B][-rN].json. Per round, for each binding and k ascending (the one-copy
    configuration, every speedup's baseline, first), the modes in the round's order: what is compared runs
    side by side in time."""
    runs = []
    for r in range(rounds):
        for bind in binds:
            for k in ranks:
                for name in mode_order(modes, r):
                    qos = registry.BY_NAME[name].label_field == QOS_FIELD
                    for p in (qos_percentages or [max(1, 100 // k)]) if qos else [None]:
                        part = (f"part-app-{name}-k{k}" + (f"-p{p}" if p is not None else "")
                                + (f"-bind-{bind}" if bind != "none" else "") + ".json")
                        runs.append((Job(0, name, (k,), copies_total_per_k(k), p, part, app=True, bind=bind), r))
    return in_run_order(runs, rounds)
