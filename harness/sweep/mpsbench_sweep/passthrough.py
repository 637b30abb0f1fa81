"""The mpsbench options after `--`: refuse those the sweep sets, read the few it must know.

The sweep sets --mode, --ranks-per-gpu and --output for every job, after everything given here, so that
no option here nor a preset expanded in its place overrides them (mpsbench: a later flag wins);
--turns is the sweep's own (its socket per job); --resume would continue another file's run inside a
job's part. Of the rest it reads --device, --gpus and --mix, checked as mpsbench checks them (options.cpp),
so that the plan the sweep makes from them is the plan mpsbench runs: --device is auto, gpu or cpu; --gpus
holds CUDA device indices (0-1023) or GPU-/MIG- UUIDs, none twice; and whether --discard-throttled is given,
which a job in turns refuses (it has no GPU monitor).
"""
import re

from .inputs import InputError, integer, items
from .text import quoted

OWNED = {"--mode": "--modes", "--ranks-per-gpu": "--ranks-per-gpu before --", "--output": "--output before --",
         "--resume": "a new sweep; the sweep writes each job's results itself", "--turns": "--turns on|off before --"}
READ = ("--device", "--gpus", "--mix")
READ_FLAGS = ("--discard-throttled",)  # options without a value: seen as True
DEVICES = ("auto", "gpu", "cpu")
_UUID = re.compile(r"(GPU|MIG)-[0-9A-Fa-f-]+", re.ASCII)


def passthrough_options(args):
    """Checks the mpsbench options after `--`; returns the ones the sweep must know ({"device": ..., ...})."""
    seen = {}
    i = 0
    while i < len(args):
        flag, sep, value = args[i].partition("=")
        if flag in OWNED:
            raise InputError(f"{flag} after --: the sweep sets it for every job (use {OWNED[flag]})")
        if flag in READ:
            if not sep:
                if i + 1 >= len(args):
                    raise InputError(f"{flag} after --: missing value")
                i += 1
                value = args[i]
            seen[flag[2:]] = value
        elif flag in READ_FLAGS:
            seen[flag[2:]] = True
        i += 1
    if "device" in seen and seen["device"] not in DEVICES:
        raise InputError(f"--device after --: unknown device {quoted(seen['device'])} (choose auto, gpu or cpu)")
    if "gpus" in seen:
        gpu_items(seen["gpus"])
    return seen


def gpu_items(text):
    """The items of mpsbench's --gpus: device indices as int, UUIDs as written; mpsbench's errors."""
    out = []
    for item in items("--gpus after --", text):
        if item.startswith("MIG-GPU-"):
            raise InputError(f"--gpus after --: {quoted(item)} is the old MIG-GPU-<uuid>/<gi>/<ci> form; give the "
                             "MIG-<uuid> that nvidia-smi -L prints")
        gpu = item if _UUID.fullmatch(item) else integer("--gpus after --", item, 0, 1023)
        if gpu in out:
            raise InputError(f"--gpus after --: GPU {quoted(item)} listed twice")
        out.append(gpu)
    return out


def gpu_indices(text):
    """The device indices of --gpus, or None when it names a GPU by UUID (its index is not known here)."""
    gpus = gpu_items(text)
    return None if any(isinstance(g, str) for g in gpus) else set(gpus)
