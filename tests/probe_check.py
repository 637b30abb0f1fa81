#!/usr/bin/env python3
"""Checks mpsbench-probe's one line of JSON (tests/CMakeLists.txt: probe_json, probe_gpu, example_small_kernels_gpu).

usage: probe_check.py [--gpu] PROBE [--then PROGRAM ARGS...]
Without --gpu: the document must be well formed wherever it runs; on a machine
without a usable GPU `gpus` is empty and `problem` says why. With --gpu: at
least one GPU must be listed with sane fields (else exit 77: ctest's skip),
the probe must then see exactly that GPU when CUDA_VISIBLE_DEVICES names its
UUID and report a CUDA_MPS_ACTIVE_THREAD_PERCENTAGE it is given (what
mpsbench-sweep --app relies on), and --then runs a GPU program that must exit 0
and print result=ok.
"""
import json
import os
import re
import subprocess
import sys

SKIP = 77
VERSION = re.compile(r"^\d+\.\d+$")
GPU_FIELDS = {"index": int, "name": str, "uuid": str, "sm_count": int, "memory_total_bytes": int,
              "memory_free_bytes": int, "compute_mode": str, "sm_clock_peak_khz": int, "mps_enabled": bool}


def fail(message):
    print(f"probe_check: {message}")
    sys.exit(1)


def run_probe(probe, **env):
    """The probe's document, run with env added to (or, for None values, removed from) this environment."""
    environment = dict(os.environ)
    for key, value in env.items():
        environment.pop(key, None)
        if value is not None:
            environment[key] = value
    r = subprocess.run([probe], capture_output=True, text=True, timeout=60, env=environment)
    lines = r.stdout.strip().splitlines()
    if r.returncode != 0 or len(lines) != 1:
        fail(f"{env}: exit status {r.returncode} and {len(lines)} stdout lines (expected 0 and 1): {r.stdout}{r.stderr}")
    try:
        doc = json.loads(lines[0])
    except ValueError as e:
        fail(f"not JSON ({e}): {lines[0]}")
    check_document(doc)
    return doc


def check_document(doc):
    for key, kind in (("tool", str), ("host", str), ("version", str), ("git_commit", str), ("git_dirty", bool),
                      ("cuda", dict), ("gpus", list), ("problem", str)):
        if not isinstance(doc.get(key), kind) or isinstance(doc.get(key), bool) != (kind is bool):
            fail(f"field {key} missing or not {kind.__name__}: {doc}")
    if doc["tool"] != "mpsbench-probe" or not doc["host"]:
        fail(f"tool or host wrong: {doc}")
    cuda = doc["cuda"]
    if not (cuda.get("driver_version") == "none" or VERSION.match(str(cuda.get("driver_version")))):
        fail(f"cuda.driver_version is neither 'none' nor MAJOR.MINOR: {cuda}")
    if not VERSION.match(str(cuda.get("runtime_version"))) or not isinstance(cuda.get("cublas_version"), int):
        fail(f"cuda versions malformed: {cuda}")
    if not doc["gpus"] and not doc["problem"]:
        fail("no GPU listed and no problem given")
    for g in doc["gpus"]:
        for key, kind in GPU_FIELDS.items():
            if not isinstance(g.get(key), kind) or isinstance(g.get(key), bool) != (kind is bool):
                fail(f"GPU field {key} missing or not {kind.__name__}: {g}")
        percentage = g.get("mps_active_thread_percentage", "missing")
        if percentage is not None and not (isinstance(percentage, int) and 1 <= percentage <= 100):
            fail(f"mps_active_thread_percentage is neither null nor in [1, 100]: {g}")
        if (not g["uuid"].startswith(("GPU-", "MIG-")) or g["sm_count"] < 1 or g["memory_total_bytes"] <= 0
                or not 0 < g["memory_free_bytes"] <= g["memory_total_bytes"] or g["sm_clock_peak_khz"] <= 0
                or g["compute_mode"] not in ("DEFAULT", "EXCLUSIVE_PROCESS", "PROHIBITED")):
            fail(f"GPU entry not sane: {g}")
    if [g["index"] for g in doc["gpus"]] != list(range(len(doc["gpus"]))):
        fail(f"GPU indices are not 0..n-1 in order: {doc['gpus']}")


def main():
    args = sys.argv[1:]
    want_gpu = args[:1] == ["--gpu"]
    args = args[1:] if want_gpu else args
    then = args[args.index("--then") + 1:] if "--then" in args else []
    probe = args[0]
    doc = run_probe(probe)
    if not doc["gpus"]:
        if want_gpu:
            print(f"probe_check: skipped, no usable GPU here: {doc['problem']}")
            sys.exit(SKIP)
        print(f"ok: no GPU: {doc['problem']}")
        return 0
    if doc["problem"]:
        fail(f"GPUs listed, yet a problem: {doc['problem']}")
    print(f"ok: {len(doc['gpus'])} GPU(s): " + ", ".join(f"{g['name']} {g['uuid']} {g['sm_count']} SMs "
                                                       f"mps_enabled={g['mps_enabled']}" for g in doc["gpus"]))
    # What the sweep does per GPU: one UUID visible, maybe a thread percentage. Without an MPS
    # daemon CUDA ignores the percentage, but the probe must still report what the copies got.
    last = doc["gpus"][-1]
    one = run_probe(probe, CUDA_VISIBLE_DEVICES=last["uuid"], CUDA_MPS_ACTIVE_THREAD_PERCENTAGE="50")
    if [g["uuid"] for g in one["gpus"]] != [last["uuid"]] or one["gpus"][0]["index"] != 0:
        fail(f"CUDA_VISIBLE_DEVICES={last['uuid']}: expected that GPU alone as device 0, got {one['gpus']}")
    if one["gpus"][0]["mps_active_thread_percentage"] != 50:
        fail(f"CUDA_MPS_ACTIVE_THREAD_PERCENTAGE=50 not reported: {one['gpus'][0]}")
    print(f"ok: CUDA_VISIBLE_DEVICES={last['uuid']} shows that GPU alone; percentage 50 reported")
    if then:
        run = subprocess.run(then, capture_output=True, text=True, timeout=110)
        if run.returncode != 0 or "result=ok" not in run.stdout:
            fail(f"{' '.join(then)}: exit {run.returncode}: {run.stdout}{run.stderr}")
        print(run.stdout.strip())
    return 0


if __name__ == "__main__":
    sys.exit(main())
