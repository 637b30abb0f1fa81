"""What a CUDA context sees in the copies' environment (mpsbench-probe), and whether that fits the mode.

An external application cannot tell us whether its context became an MPS
client, so before each configuration the farmer runs `mpsbench-probe` once per
GPU in exactly the environment the copies of that GPU get (their
CUDA_VISIBLE_DEVICES, CUDA_MPS_PIPE_DIRECTORY, CUDA_MPS_ACTIVE_THREAD_PERCENTAGE).
CUDA silently runs a process without MPS when no daemon answers, so a
contradiction with the requested mode is an error, as for the built-in kernels.
"""
import json
import subprocess

from mpsbench_core import modes as registry

from ..plan import QOS_FIELD

PROBE_TIMEOUT_S = 120.0


class ProbeError(Exception):
    """The probe could not run or reported a problem."""


def run_probe(path, env, timeout=PROBE_TIMEOUT_S):
    """The probe's JSON document in environment env; ProbeError when it fails or finds no GPU."""
    try:
        r = subprocess.run([path], env=env, capture_output=True, text=True, timeout=timeout)
    except subprocess.TimeoutExpired:
        raise ProbeError(f"{path} did not finish within {timeout:g} s") from None
    except OSError as e:
        raise ProbeError(f"cannot run {path}: {e.strerror or e}") from None
    try:
        doc = json.loads(r.stdout.strip().splitlines()[-1])
        problem = doc["problem"]
        doc["gpus"][0:0]
    except (ValueError, IndexError, KeyError, TypeError):
        said = (r.stderr.strip() or r.stdout.strip())[-300:]
        raise ProbeError(f"{path} exited with status {r.returncode} without its JSON line"
                         + (f": {said}" if said else "")) from None
    if r.returncode != 0 or problem:
        raise ProbeError(problem or f"{path} exited with status {r.returncode}")
    if not doc["gpus"]:
        raise ProbeError("no CUDA device visible")
    return doc


def state_problem(mode, thread_percentage, state):
    """Why one GPU's probe state contradicts the mode, or None. state: one entry of the probe's gpus; what a mode
    expects is the registry's (Mode.expects_mps_client, and the thread percentage where it labels the mode)."""
    uuid = state.get("uuid", "?")
    client = state.get("mps_enabled")
    m = registry.BY_NAME[mode]
    if m.expects_mps_client is False and client:
        return f"GPU {uuid}: {mode} needs no MPS, but the copies' context is an MPS client"
    if m.expects_mps_client and not client:
        return (f"GPU {uuid}: mode {mode} needs an MPS client, but the copies' context is not one "
                "(no MPS daemon reachable through CUDA_MPS_PIPE_DIRECTORY)")
    if m.label_field == QOS_FIELD and state.get("mps_active_thread_percentage") != thread_percentage:
        return (f"GPU {uuid}: mode {mode} at {thread_percentage}% but the context reports "
                f"{state.get('mps_active_thread_percentage')}")
    return None
