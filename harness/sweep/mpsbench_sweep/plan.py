"""Which MPI jobs a sweep runs, and what is checked before the first one starts.

One job per mode, except mps-qos: CUDA_MPS_ACTIVE_THREAD_PERCENTAGE is a
per-process setting, so each (ranks per GPU, percentage) needs its own job with
exactly that many ranks per GPU; mps-mem runs one job per memory limit
(CUDA_MPS_PINNED_DEVICE_MEM_LIMIT, the same for every k, so one job covers all
of them); the client ramp (--client-ramp) runs mps once per k up to the MPS
client limit and once past it. Everything that can be known before a launch is
checked here, so a sweep that cannot work fails in seconds with exit status 2,
not after an hour of timeslice measurements. Memory that does not fit is the
exception: only mpsbench knows its buffer sizes and measures the context memory
of each rank, and it rejects such a plan before any work (exit 2, one
`mpsbench: error:` line), which stops the sweep.
"""
import os
import re
import shutil
from dataclasses import dataclass
from typing import List, Optional

MODES = ("timeslice", "mps", "mps-qos", "streams")  # the default modes, in their order
ALL_MODES = ("timeslice", "mps", "mps-qos", "mps-mem", "streams", "green")  # what --modes accepts
# streams and green: one rank per GPU runs the k instances (green: each in a green context of 1/k of the SMs).
ONE_RANK_MODES = ("streams", "green")
MPS_MODES = ("mps", "mps-qos", "mps-mem")
MEM_LIMIT = re.compile(r"^([1-9][0-9]{0,15})([KMG])(B?)$", re.IGNORECASE)
MEM_UNITS = {"K": 2**10, "M": 2**20, "G": 2**30}
OWNED = {"--mode": "--modes", "--ranks-per-gpu": "--ranks-per-gpu before --", "--output": "--output before --"}
MAX_STREAM_INSTANCES = 64  # mpsbench's kMaxStreamInstances


class PlanError(Exception):
    """Bad input or a preflight failure (exit status 2)."""


@dataclass
class Job:
    index: int
    mode: str
    ranks_per_gpu: List[int]
    np: int
    thread_percentage: Optional[int]
    part_name: str
    mem_limit: Optional[str] = None  # mps-mem: the CUDA_MPS_PINNED_DEVICE_MEM_LIMIT value per device ("2G")
    ramp: bool = False               # a step of the client ramp (--client-ramp): mode mps at one k
    past_limit: bool = False         # the ramp's step past the MPS client limit: its failure is the finding
    mix: bool = False                # --mix after --: the mix sets mpsbench's ranks per GPU itself

    def mpsbench_args(self, part_path):
        # mpsbench has no mode mps-mem: its ranks are plain MPS clients with one more variable set.
        mode = "mps" if self.mode == "mps-mem" else self.mode
        ranks = [] if self.mix else ["--ranks-per-gpu", ",".join(map(str, self.ranks_per_gpu))]
        return ["--mode", mode] + ranks + ["--output", part_path]

    def label(self):
        if self.mode == "mps-qos":
            return f"{self.mode} k={self.ranks_per_gpu[0]} {self.thread_percentage}%"
        if self.mode == "mps-mem":
            return f"{self.mode} {self.mem_limit}"
        if self.ramp:
            return f"{self.mode} k={self.ranks_per_gpu[0]}" + (" (past the limit)" if self.past_limit else "")
        return self.mode


def parse_list(flag, text, choices=None, low=None, high=None):
    items = [t.strip() for t in text.split(",")]
    if not text or any(not t for t in items):
        raise PlanError(f"{flag}: empty item in '{text}'")
    out = []
    for item in items:
        if choices is not None:
            if item not in choices:
                raise PlanError(f"{flag}: unknown value '{item}' (choose from {', '.join(choices)})")
            value = item
        else:
            if not item.isdigit():
                raise PlanError(f"{flag}: '{item}' is not a positive integer")
            value = int(item)
            if value < low or value > high:
                raise PlanError(f"{flag}: {value} is out of range [{low}, {high}]")
        if value not in out:
            out.append(value)
    return out if choices is not None else sorted(out)


def parse_mem_limits(text):
    """--mem-limits: values such as 2G, 512M, 512MB (K, M, G; an optional B), ascending by size, duplicates
    (by size) dropped. The text is passed on as written (upper case), since CUDA_MPS_PINNED_DEVICE_MEM_LIMIT
    reads the suffixes itself; sizes are counted in binary multiples (1G = 2^30 bytes) only to sort them."""
    items = [t.strip() for t in text.split(",")]
    if not text or any(not t for t in items):
        raise PlanError(f"--mem-limits: empty item in '{text}'")
    out = {}
    for item in items:
        m = MEM_LIMIT.match(item)
        if m is None:
            raise PlanError(f"--mem-limits: '{item}' is not a memory size with a K, M or G suffix (e.g. 2G, 512M)")
        out.setdefault(int(m.group(1)) * MEM_UNITS[m.group(2).upper()], item.upper())
    return [out[size] for size in sorted(out)]


def mem_limit_bytes(limit):
    m = MEM_LIMIT.match(limit)
    return int(m.group(1)) * MEM_UNITS[m.group(2).upper()]


def mem_limit_env(limit, ordinals):
    """CUDA_MPS_PINNED_DEVICE_MEM_LIMIT for every device ordinal of the node: "0=2G,1=2G" (NVIDIA's MPS docs:
    comma-separated DEVICE=LIMIT pairs, device ordinals as the client enumerates them)."""
    return ",".join(f"{i}={limit}" for i in range(ordinals))


def passthrough_options(args):
    """Checks the mpsbench options after `--`; returns the few the sweep must know (device, gpus)."""
    seen = {}
    i = 0
    while i < len(args):
        flag, sep, value = args[i].partition("=")
        if flag in OWNED:
            raise PlanError(f"{flag} after --: the sweep sets it for every job (use {OWNED[flag]})")
        if flag in ("--device", "--gpus", "--mix"):
            if not sep:
                if i + 1 >= len(args):
                    raise PlanError(f"{flag} after --: missing value")
                i += 1
                value = args[i]
            seen[flag[2:]] = value
        i += 1
    return seen


def mix_ranks(text):
    """The active ranks per GPU of mpsbench's --mix TENANT:RANKS,...: the sum of its tenants' ranks (mpsbench
    checks the rest of the text itself)."""
    total = 0
    for item in text.split(","):
        _, sep, ranks = item.rpartition(":")
        if not sep or not ranks.isdigit() or int(ranks) < 1:
            raise PlanError(f"--mix after --: '{item}' is not TENANT:RANKS (e.g. matmul:4,inference:4)")
        total += int(ranks)
    return total


def plan_jobs(modes, ranks, qos_percentages, nodes, gpus_per_node, mem_limits=None, mix=False):
    """Jobs in mode order; part files are named part-MODE[-kK][-pP].json, part-mps-mem-LIMIT.json. mix: the
    ranks per GPU are those of mpsbench's --mix (one value, the tenants' sum), which mpsbench sets itself."""
    jobs = []
    for mode in modes:
        if mode == "mps-mem":
            for limit in mem_limits or []:
                jobs.append(Job(len(jobs), mode, list(ranks), nodes * gpus_per_node * max(ranks), None,
                                f"part-mps-mem-{limit}.json", mem_limit=limit))
        elif mode == "mps-qos":
            for k in ranks:
                for p in (qos_percentages or [max(1, 100 // k)]):
                    jobs.append(Job(len(jobs), mode, [k], nodes * gpus_per_node * k, p, f"part-{mode}-k{k}-p{p}.json"))
        else:
            per_gpu = 1 if mode in ONE_RANK_MODES else max(ranks)
            jobs.append(Job(len(jobs), mode, list(ranks), nodes * gpus_per_node * per_gpu, None, f"part-{mode}.json"))
    for job in jobs:
        job.mix = mix
    return jobs


def ramp_steps(limit):
    """Clients per GPU of the client ramp: 1, 2, 4, ... below the limit, the limit, and one past it."""
    steps, k = [], 1
    while k < limit:
        steps.append(k)
        k *= 2
    return steps + [limit, limit + 1]


def plan_ramp(limit, nodes, gpus_per_node):
    """The client ramp: mode mps, one job per k (part-mps-kK.json); the last one is past the limit."""
    return [Job(i, "mps", [k], nodes * gpus_per_node * k, None, f"part-mps-k{k}.json", ramp=True,
                past_limit=k > limit) for i, k in enumerate(ramp_steps(limit))]


def client_limit(explicit, gpus):
    """MPS clients per device: --mps-client-limit, else 16 before Volta (compute capability < 7.0), else 48."""
    if explicit is not None:
        return explicit, "--mps-client-limit"
    caps = [g["compute_cap"] for g in gpus or [] if g.get("compute_cap")]
    if caps and min(caps) < 7.0:
        return 16, f"compute capability {min(caps):g} (before Volta)"
    return 48, "Volta and newer"


def executable(path):
    """The program's full path, or None (a bare name is looked up on PATH)."""
    if os.sep in path:
        return os.path.abspath(path) if os.path.isfile(path) and os.access(path, os.X_OK) else None
    return shutil.which(path)


def preflight(*, modes, ranks, jobs, device, gpus, used_gpu_indices, limit, limit_reason, mpsbench, control,
              nodes, launcher_kind):
    """Raises PlanError for a sweep that cannot work. mpsbench is None when an application is farmed (--app)."""
    if mpsbench is not None and executable(mpsbench) is None:
        raise PlanError(f"--mpsbench: '{mpsbench}' is not an executable file (build it: cmake --build build)")
    mps = [m for m in modes if m in MPS_MODES]
    if device == "cpu" and mpsbench is not None:
        gpu_only = [m for m in modes if m != "streams"]
        if gpu_only:
            raise PlanError(f"--device cpu after --: only --modes streams runs on the CPU device "
                            f"({', '.join(gpu_only)} need the GPU)")
    if mps and executable(control) is None:
        raise PlanError(f"--mps-control: '{control}' not found; modes {', '.join(mps)} need the MPS control "
                        "program (install the NVIDIA driver's compute utilities or drop them from --modes)")
    if mps and max(ranks) > limit:
        raise PlanError(f"--ranks-per-gpu: {max(ranks)} MPS clients per GPU requested, but an MPS server accepts "
                        f"at most {limit} per device ({limit_reason}); lower --ranks-per-gpu or drop "
                        f"{', '.join(mps)} from --modes")
    for mode in (m for m in ONE_RANK_MODES if m in modes):
        if max(ranks) > MAX_STREAM_INSTANCES:
            raise PlanError(f"--ranks-per-gpu: mode {mode} runs at most {MAX_STREAM_INSTANCES} instances per GPU")
    for g in gpus or []:
        if used_gpu_indices is not None and g["index"] not in used_gpu_indices:
            continue
        mode = g["compute_mode"]
        if mode == "PROHIBITED":
            raise PlanError(f"GPU {g['index']} is in compute mode PROHIBITED: no process can use it "
                            "(the sweep never changes the compute mode)")
        if mode == "EXCLUSIVE_PROCESS" and "timeslice" in modes and max(ranks) > 1:
            raise PlanError(f"GPU {g['index']} is in compute mode EXCLUSIVE_PROCESS, which admits one process, but "
                            f"timeslice runs {max(ranks)} ranks per GPU; the sweep never changes the compute mode: "
                            "drop timeslice from --modes or have an administrator run nvidia-smi -c DEFAULT")
    if launcher_kind == "srun":
        allocated_nodes = os.environ.get("SLURM_NNODES") or os.environ.get("SLURM_JOB_NUM_NODES")
        if allocated_nodes and allocated_nodes.isdigit() and nodes > int(allocated_nodes):
            raise PlanError(f"--nodes {nodes}: the Slurm allocation has {allocated_nodes} node(s)")
        tasks = os.environ.get("SLURM_NTASKS")
        if tasks and tasks.isdigit():
            biggest = max(jobs, key=lambda j: j.np)
            if biggest.np > int(tasks):
                raise PlanError(f"mode {biggest.mode} needs {biggest.np} tasks but the allocation has "
                                f"SLURM_NTASKS={tasks} (sbatch --ntasks-per-node={biggest.np // nodes})")
