"""Which MPI jobs a sweep runs, and what is checked before the first one starts.

One job per mode, except mps-qos: CUDA_MPS_ACTIVE_THREAD_PERCENTAGE is a
per-process setting, so each (ranks per GPU, percentage) needs its own job with
exactly that many ranks per GPU. Everything that can be known before a launch is
checked here, so a sweep that cannot work fails in seconds with exit status 2,
not after an hour of timeslice measurements. Memory that does not fit is the
exception: only mpsbench knows its buffer sizes and measures the context memory
of each rank, and it rejects such a plan before any work (exit 2, one
`mpsbench: error:` line), which stops the sweep.
"""
import os
import shutil
from dataclasses import dataclass
from typing import List, Optional

MODES = ("timeslice", "mps", "mps-qos", "streams")
MPS_MODES = ("mps", "mps-qos")
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

    def mpsbench_args(self, part_path):
        return ["--mode", self.mode, "--ranks-per-gpu", ",".join(map(str, self.ranks_per_gpu)), "--output", part_path]

    def label(self):
        extra = f" k={self.ranks_per_gpu[0]} {self.thread_percentage}%" if self.mode == "mps-qos" else ""
        return f"{self.mode}{extra}"


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


def passthrough_options(args):
    """Checks the mpsbench options after `--`; returns the few the sweep must know (device, gpus)."""
    seen = {}
    i = 0
    while i < len(args):
        flag, sep, value = args[i].partition("=")
        if flag in OWNED:
            raise PlanError(f"{flag} after --: the sweep sets it for every job (use {OWNED[flag]})")
        if flag in ("--device", "--gpus"):
            if not sep:
                if i + 1 >= len(args):
                    raise PlanError(f"{flag} after --: missing value")
                i += 1
                value = args[i]
            seen[flag[2:]] = value
        i += 1
    return seen


def plan_jobs(modes, ranks, qos_percentages, nodes, gpus_per_node):
    """Jobs in mode order; part files are named part-MODE[-kK][-pP].json."""
    jobs = []
    for mode in modes:
        if mode == "mps-qos":
            for k in ranks:
                for p in (qos_percentages or [max(1, 100 // k)]):
                    jobs.append(Job(len(jobs), mode, [k], nodes * gpus_per_node * k, p, f"part-{mode}-k{k}-p{p}.json"))
        else:
            per_gpu = 1 if mode == "streams" else max(ranks)
            jobs.append(Job(len(jobs), mode, list(ranks), nodes * gpus_per_node * per_gpu, None, f"part-{mode}.json"))
    return jobs


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
    if "streams" in modes and max(ranks) > MAX_STREAM_INSTANCES:
        raise PlanError(f"--ranks-per-gpu: mode streams runs at most {MAX_STREAM_INSTANCES} instances per GPU")
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
