"""The environment of a job's ranks (or an application's copies) in each mode.

A mode without MPS gets a private, empty CUDA_MPS_PIPE_DIRECTORY: its ranks cannot reach any daemon
(MPS_ENABLED=0, checked on an H100), whatever runs on the node. An MPS mode gets the daemon's pipe and
log directories, and the per-client settings its label carries: CUDA_MPS_ACTIVE_THREAD_PERCENTAGE
(mps-qos), CUDA_MPS_PINNED_DEVICE_MEM_LIMIT (mps-mem). Settings of the user's own environment are
removed first, so a job gets exactly what its mode says.
"""
import os
import shutil
import tempfile

from ..launcher import MPS_VARS
from ..plan import mem_limit_env

# Tells mpsbench it runs as a job of this sweep (main.cpp: no "run the comparison" hint).
IN_SWEEP_VAR = "MPSBENCH_IN_SWEEP"


class JobEnvironment:
    """The environment of one job; close() removes its private directory."""

    def __init__(self, job, daemon, mem_device_ordinals):
        self.private_dir = None
        env = {k: v for k, v in os.environ.items() if k not in MPS_VARS}
        # mpsbench's "no MPS daemon: run the comparison" hint is for a user's own mpirun; the sweep's
        # timeslice job is that comparison's first half.
        env[IN_SWEEP_VAR] = "1"
        if daemon is None:
            self.private_dir = tempfile.mkdtemp(prefix="mpsb-empty-")
            env["CUDA_MPS_PIPE_DIRECTORY"] = self.private_dir
        else:
            env["CUDA_MPS_PIPE_DIRECTORY"] = daemon["pipe_dir"]
            if daemon["log_dir"]:
                env["CUDA_MPS_LOG_DIRECTORY"] = daemon["log_dir"]
            if job.thread_percentage is not None:
                env["CUDA_MPS_ACTIVE_THREAD_PERCENTAGE"] = str(job.thread_percentage)
            if job.mem_limit is not None:
                env["CUDA_MPS_PINNED_DEVICE_MEM_LIMIT"] = mem_limit_env(job.mem_limit, mem_device_ordinals)
        self.env = env

    def close(self):
        if self.private_dir is not None:
            shutil.rmtree(self.private_dir, ignore_errors=True)
            self.private_dir = None
