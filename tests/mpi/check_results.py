#!/usr/bin/env python3
"""Checks an mpsbench results file from a single-host CPU run.

Every rank must be present, every configuration of the default plan must be
there with the right active ranks, and every result must be verified.
usage: check_results.py FILE --world-size N --sizes 24,40 [--kernels matmul]
"""
import argparse
import json
import sys


def default_rank_counts(maximum):
    counts, k = [], 1
    while k < maximum:
        counts.append(k)
        k *= 2
    return counts + [maximum]


def fail(message):
    print(f"check_results: {message}", file=sys.stderr)
    sys.exit(1)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("file")
    parser.add_argument("--world-size", type=int, required=True)
    parser.add_argument("--sizes", required=True)
    parser.add_argument("--kernels", default=None, help="comma list; default: every kernel present in the file")
    parser.add_argument("--mode", default="auto")
    parser.add_argument("--ranks-per-gpu", default=None, help="comma list; default: 1, 2, 4, ... world size")
    args = parser.parse_args()

    with open(args.file, encoding="utf-8") as handle:
        doc = json.load(handle)
    n = args.world_size
    if doc.get("schema") != "mpsbench-results" or not doc.get("complete"):
        fail("file is not a complete mpsbench-results document")
    ctx = doc["context"]
    if ctx["mpi"]["world_size"] != n:
        fail(f"world_size {ctx['mpi']['world_size']} != {n}")
    if sorted(r["rank"] for r in ctx["ranks"]) != list(range(n)):
        fail(f"context ranks {[r['rank'] for r in ctx['ranks']]} are not 0..{n - 1}")
    if ctx["device"]["used"] != "cpu":
        fail("expected the CPU device")
    slots = {r["rank"]: r["device_slot"] for r in ctx["ranks"]}

    sizes = [int(s) for s in args.sizes.split(",")]
    streams = args.mode == "streams"
    rank_counts = ([int(k) for k in args.ranks_per_gpu.split(",")] if args.ranks_per_gpu
                   else default_rank_counts(n))
    if ctx["mode_requested"] != args.mode:
        fail(f"mode_requested {ctx['mode_requested']} != {args.mode}")
    results = doc["results"]
    kernels = args.kernels.split(",") if args.kernels else sorted({r["kernel"] for r in results})
    seen = set()
    for r in results:
        key = (r["kernel"], r["precision"], r["size"], r["ranks_per_gpu"])
        if key in seen:
            fail(f"duplicate result {key}")
        seen.add(key)
        k = r["ranks_per_gpu"]
        if r["status"] != "ok" or not r["verified"]:
            fail(f"{key} not verified: {r['ranks'][0]['verification']}")
        if r["active_ranks"] != k or len(r["ranks"]) != k:
            fail(f"{key}: {r['active_ranks']} active ranks, {len(r['ranks'])} rank records, expected {k}")
        if streams:  # the first rank runs k instances, the others idle
            expected = [(0, i) for i in range(k)]
        else:
            expected = [(rank, 0) for rank, slot in sorted(slots.items()) if slot < k]
        got = sorted((x["rank"], x["instance"]) for x in r["ranks"])
        if got != expected:
            fail(f"{key}: (rank, instance) {got} != {expected}")
        if r["instances_per_rank"] != (k if streams else 1):
            fail(f"{key}: instances_per_rank {r['instances_per_rank']}")
        if r["mode"] != ("streams" if streams else "cpu"):
            fail(f"{key}: mode {r['mode']}")
        if len(r["window_s"]) != ctx["settings"]["repetitions"] or min(r["window_s"]) <= 0:
            fail(f"{key}: bad windows {r['window_s']}")
        primary = r["aggregate"][r["primary_metric"]]
        if not primary["median"] > 0:
            fail(f"{key}: no throughput")
        speedup = r["speedup_vs_one_rank_per_gpu"]
        if speedup is None or (k == 1 and speedup != 1.0):
            fail(f"{key}: speedup {speedup} for {k} ranks per device")
        if not 1.0 / k - 1e-9 <= r["jain_fairness"] <= 1.0 + 1e-9:
            fail(f"{key}: Jain index {r['jain_fairness']} outside [1/{k}, 1]")
    for kernel in kernels:
        mine = [r for r in results if r["kernel"] == kernel]
        if not mine:
            fail(f"no results for kernel {kernel}")
        precisions = sorted({r["precision"] for r in mine})
        expected = {(kernel, p, s, k) for p in precisions for s in sizes for k in rank_counts}
        got = {(r["kernel"], r["precision"], r["size"], r["ranks_per_gpu"]) for r in mine}
        if got != expected:
            fail(f"{kernel}: configurations {sorted(got)} != expected {sorted(expected)}")
    print(f"check_results: {len(results)} results, {n} ranks, all verified")


if __name__ == "__main__":
    main()
