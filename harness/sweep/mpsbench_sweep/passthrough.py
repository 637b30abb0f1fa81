"""The mpsbench options after `--`: refuse those the sweep sets, read the few it must know.

The sweep sets --mode, --ranks-per-gpu and --output for every job. Of the rest it reads --device,
--gpus and --mix, for the plan.
"""
from .inputs import InputError, integer_list

OWNED = {"--mode": "--modes", "--ranks-per-gpu": "--ranks-per-gpu before --", "--output": "--output before --"}
READ = ("--device", "--gpus", "--mix")


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
        i += 1
    return seen


def gpu_items(text):
    """The device indices of mpsbench's --gpus."""
    return integer_list("--gpus", text, 0, 1023)


def gpu_indices(text):
    """The device indices of --gpus."""
    return set(gpu_items(text))
