"""What is checked before the first job starts, so a sweep that cannot work fails in seconds (exit 2).

Not after an hour of timeslice measurements. Memory that does not fit is the exception: only
mpsbench knows its buffer sizes and measures the context memory of each rank, and it rejects such a
plan before any work (exit 2, one `mpsbench: error:` line), which stops the sweep. The limits here are
mpsbench's own (harness/plan.hpp, options.cpp), so the sweep never plans a job mpsbench would refuse.
"""
import os
import shutil

from mpsbench_core import modes as registry

from .inputs import InputError, decimal_or_none
from .text import quoted

MAX_STREAM_INSTANCES = 64  # mpsbench's kMaxStreamInstances (harness/plan.hpp): k of a one-process mode
# On the CPU device mpsbench runs the one-process reference only (no GPU to share).
CPU_DEVICE_MODES = ("streams",)


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
    """Raises InputError for a sweep that cannot work. mpsbench is None when an application is farmed (--app)."""
    if mpsbench is not None and executable(mpsbench) is None:
        raise InputError(f"--mpsbench: {quoted(mpsbench)} is not an executable file (build it: cmake --build build)")
    mps = [m for m in modes if m in registry.MPS_MODES]
    if device == "cpu" and mpsbench is not None:
        gpu_only = [m for m in modes if m not in CPU_DEVICE_MODES]
        if gpu_only:
            raise InputError(f"--device cpu after --: only --modes {','.join(CPU_DEVICE_MODES)} runs on the CPU "
                             f"device ({', '.join(gpu_only)} need the GPU)")
    if mps and executable(control) is None:
        raise InputError(f"--mps-control: {quoted(control)} not found; modes {', '.join(mps)} need the MPS control "
                         "program (install the NVIDIA driver's compute utilities or drop them from --modes)")
    if mps and max(ranks) > limit:
        raise InputError(f"--ranks-per-gpu: {max(ranks)} MPS clients per GPU requested, but an MPS server accepts "
                         f"at most {limit} per device ({limit_reason}); lower --ranks-per-gpu or drop "
                         f"{', '.join(mps)} from --modes")
    for mode in (m for m in modes if m in registry.ONE_PROCESS_MODES):
        if max(ranks) > MAX_STREAM_INSTANCES:
            raise InputError(f"--ranks-per-gpu: mode {mode} runs at most {MAX_STREAM_INSTANCES} instances per GPU")
    for g in gpus or []:
        if used_gpu_indices is not None and g["index"] not in used_gpu_indices:
            continue
        mode = g["compute_mode"]
        if mode == "PROHIBITED":
            raise InputError(f"GPU {g['index']} is in compute mode PROHIBITED: no process can use it "
                             "(the sweep never changes the compute mode)")
        several = [m for m in modes if m not in registry.ONE_PROCESS_MODES and m not in registry.MPS_MODES]
        if mode == "EXCLUSIVE_PROCESS" and several and max(ranks) > 1:
            raise InputError(f"GPU {g['index']} is in compute mode EXCLUSIVE_PROCESS, which admits one process, but "
                             f"{several[0]} runs {max(ranks)} ranks per GPU; the sweep never changes the compute "
                             f"mode: drop {', '.join(several)} from --modes or have an administrator run "
                             "nvidia-smi -c DEFAULT")
    if launcher_kind == "srun":
        allocated = decimal_or_none(os.environ.get("SLURM_NNODES") or os.environ.get("SLURM_JOB_NUM_NODES"))
        if allocated is not None and nodes > allocated:
            raise InputError(f"--nodes {nodes}: the Slurm allocation has {allocated} node(s)")
        tasks = decimal_or_none(os.environ.get("SLURM_NTASKS"))
        if tasks is not None:
            biggest = max(jobs, key=lambda j: j.np)
            if biggest.np > tasks:
                raise InputError(f"mode {biggest.mode} needs {biggest.np} tasks but the allocation has "
                                 f"SLURM_NTASKS={tasks} (sbatch --ntasks-per-node={biggest.np // nodes})")
