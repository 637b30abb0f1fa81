#!/usr/bin/env python3
"""Runs mpsbench-micro on the CPU and checks its Google Benchmark JSON.

The expected grid comes from `mpsbench-micro --list-kernels` (the registry),
crossed with the sizes given here: exactly one benchmark per kernel x precision
x size, none in error, each verified, every rate counter positive and at least
one present. Both the --benchmark_out file and the JSON on stdout are checked,
so both of the library's output paths are exercised.
usage: check_micro_json.py MICRO OUT_FILE --sizes 24,40
"""
import argparse
import json
import math
import subprocess
import sys


def fail(message):
    print(f"check_micro_json: {message}", file=sys.stderr)
    sys.exit(1)


def registry(micro):
    out = subprocess.run([micro, "--list-kernels"], check=True, capture_output=True, text=True).stdout
    kernels = {}
    for line in out.splitlines():
        name, *fields = line.split()
        values = dict(f.split("=", 1) for f in fields)
        kernels[name] = values["precisions"].split(",")
    if not kernels:
        fail("--list-kernels printed no kernel")
    return kernels


def check_document(doc, where, expected):
    context = doc.get("context", {})
    if context.get("mpsbench_device") != "cpu":
        fail(f"{where}: context mpsbench_device is {context.get('mpsbench_device')!r}, expected 'cpu'")
    seen = {}
    for bench in doc.get("benchmarks", []):
        name = bench.get("name", "")
        if bench.get("error_occurred") or bench.get("skipped"):
            fail(f"{where}: {name} failed: {bench.get('error_message')}")
        if bench.get("run_type", "iteration") != "iteration":
            continue
        parts = name.split("/")
        if len(parts) != 4 or parts[3] != "manual_time":
            fail(f"{where}: unexpected benchmark name {name!r}")
        key = (parts[0], parts[1], int(parts[2]))
        if key in seen:
            fail(f"{where}: {name} reported twice")
        seen[key] = bench
        if not str(bench.get("label", "")).startswith("verified"):
            fail(f"{where}: {name} has no verification label: {bench.get('label')!r}")
        if not bench.get("iterations", 0) > 0 or not bench.get("real_time", 0) > 0:
            fail(f"{where}: {name} has no iterations or time")
        rates = {k: v for k, v in bench.items() if k.endswith("/s")}
        if not rates:
            fail(f"{where}: {name} has no rate counter")
        for counter, value in rates.items():
            if not (isinstance(value, (int, float)) and math.isfinite(value) and value > 0):
                fail(f"{where}: {name} counter {counter} = {value!r}")
    missing = sorted(expected - seen.keys())
    extra = sorted(seen.keys() - expected)
    if missing or extra:
        fail(f"{where}: missing {missing}, unexpected {extra}")


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("micro")
    parser.add_argument("out_file")
    parser.add_argument("--sizes", required=True)
    args = parser.parse_args()

    sizes = [int(s) for s in args.sizes.split(",")]
    expected = {(k, p, s) for k, precisions in registry(args.micro).items() for p in precisions for s in sizes}
    command = [args.micro, "--device=cpu", f"--sizes={args.sizes}", "--benchmark_min_time=0.01",
               "--benchmark_format=json", f"--benchmark_out={args.out_file}"]
    run = subprocess.run(command, capture_output=True, text=True)
    sys.stderr.write(run.stderr)
    if run.returncode != 0:
        fail(f"{' '.join(command)} exited with {run.returncode}")
    try:
        stdout_doc = json.loads(run.stdout)
    except json.JSONDecodeError as e:
        fail(f"stdout is not JSON ({e}): {run.stdout[:200]!r}")
    with open(args.out_file, encoding="utf-8") as handle:
        file_doc = json.load(handle)
    check_document(file_doc, args.out_file, expected)
    check_document(stdout_doc, "stdout", expected)
    print(f"ok: {len(expected)} benchmarks ({len(sizes)} sizes), all verified with positive rates")


if __name__ == "__main__":
    main()
