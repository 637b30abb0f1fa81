#!/usr/bin/env python3
"""Checks mpsbench-probe's one line of JSON (tests/CMakeLists.txt: probe_json, probe_gpu).

usage: probe_check.py [--gpu] PROBE [--then PROGRAM ARGS...]
Without --gpu: the document must be well formed wherever it runs; on a machine
without a usable GPU `gpus` is empty and `problem` says why. With --gpu: at
least one GPU must be listed with sane fields (else exit 77: ctest's skip),
and --then runs a GPU program that must exit 0 and print result=ok.
"""
import json
import subprocess
import sys

SKIP = 77
GPU_FIELDS = {"index": int, "name": str, "uuid": str, "sm_count": int, "memory_total_bytes": int,
              "memory_free_bytes": int, "compute_mode": str, "sm_clock_peak_khz": int, "mps_enabled": bool}


def fail(message):
    print(f"probe_check: {message}")
    sys.exit(1)


def main():
    args = sys.argv[1:]
    want_gpu = args[:1] == ["--gpu"]
    args = args[1:] if want_gpu else args
    then = args[args.index("--then") + 1:] if "--then" in args else []
    probe = args[0]
    r = subprocess.run([probe], capture_output=True, text=True, timeout=60)
    lines = r.stdout.strip().splitlines()
    if r.returncode != 0 or len(lines) != 1:
        fail(f"exit status {r.returncode} and {len(lines)} stdout lines (expected 0 and 1): {r.stdout}{r.stderr}")
    doc = json.loads(lines[0])
    for key, kind in (("tool", str), ("host", str), ("version", str), ("git_commit", str), ("cuda", dict),
                      ("gpus", list), ("problem", str)):
        if not isinstance(doc.get(key), kind):
            fail(f"field {key} missing or not {kind.__name__}: {doc}")
    if not isinstance(doc["cuda"].get("driver_version"), str) or not isinstance(doc["cuda"].get("cublas_version"),
                                                                                  int):
        fail(f"cuda versions malformed: {doc['cuda']}")
    if not doc["gpus"]:
        if not doc["problem"]:
            fail("no GPU listed and no problem given")
        if want_gpu:
            print(f"probe_check: skipped, no usable GPU here: {doc['problem']}")
            sys.exit(SKIP)
        print(f"ok: no GPU: {doc['problem']}")
        return 0
    for g in doc["gpus"]:
        for key, kind in GPU_FIELDS.items():
            if not isinstance(g.get(key), kind):
                fail(f"GPU field {key} missing or not {kind.__name__}: {g}")
        if not g["uuid"].startswith(("GPU-", "MIG-")) or g["sm_count"] < 1 or g["memory_total_bytes"] <= 0:
            fail(f"GPU entry not sane: {g}")
    print(f"ok: {len(doc['gpus'])} GPU(s): " + ", ".join(f"{g['name']} {g['uuid']} {g['sm_count']} SMs "
                                                       f"mps_enabled={g['mps_enabled']}" for g in doc["gpus"]))
    if then:
        run = subprocess.run(then, capture_output=True, text=True, timeout=110)
        if run.returncode != 0 or "result=ok" not in run.stdout:
            fail(f"{' '.join(then)}: exit {run.returncode}: {run.stdout}{run.stderr}")
        print(run.stdout.strip())
    return 0


if __name__ == "__main__":
    sys.exit(main())
