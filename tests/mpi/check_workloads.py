#!/usr/bin/env python3
"""Checks the results file of a workload_scenarios.sh run (CPU device).

usage: check_workloads.py FILE SCENARIO
  SCENARIO: allreduce | mix | inference_stream
allreduce: every record carries a checked MPI_Allreduce record and per-rank
collective times. mix: the plan of a two-tenant mix and the tenants' slowdown
against the same run's records of them alone. inference_stream: latency
percentiles of the request kernel and the byte rate of the memory kernel.
"""
import json
import math
import sys

def fail(message):
    print(f"check_workloads: {message}", file=sys.stderr)
    sys.exit(1)


def key_of(r):
    return (r["kernel"], r["precision"], r["size"], r["ranks_per_gpu"])


def close(a, b, rel=1e-9):
    return math.isclose(a, b, rel_tol=rel, abs_tol=0.0)


def check_summary(where, s, samples=None):
    if not isinstance(s, dict):
        fail(f"{where}: not a summary: {s!r}")
    for field in ("median", "min", "max", "samples"):
        if field not in s:
            fail(f"{where}: summary without {field}: {s}")
    if samples is not None and len(s["samples"]) != samples:
        fail(f"{where}: {len(s['samples'])} samples, expected {samples}")
    if not s["min"] <= s["median"] <= s["max"]:
        fail(f"{where}: min {s['min']} <= median {s['median']} <= max {s['max']} does not hold")


def check_stats(where, s):
    if not isinstance(s, dict):
        fail(f"{where}: no latency figures: {s!r}")
    if set(s) != {"count", "mean", "p50", "p95", "p99", "max"}:
        fail(f"{where}: latency fields {sorted(s)}")
    if not (isinstance(s["count"], int) and s["count"] > 0):
        fail(f"{where}: count {s['count']}")
    if not 0 < s["p50"] <= s["p95"] <= s["p99"] <= s["max"]:
        fail(f"{where}: 0 < p50 <= p95 <= p99 <= max does not hold: {s}")
    if not 0 < s["mean"] <= s["max"]:
        fail(f"{where}: mean {s['mean']} outside (0, max]")


def check_common(doc):
    if doc.get("schema") != "mpsbench-results" or not doc.get("complete"):
        fail("file is not a complete mpsbench-results document")
    if doc["context"]["device"]["used"] != "cpu":
        fail("expected the CPU device")
    results = doc["results"]
    if not results:
        fail("no results")
    plan = doc["context"]["plan"]
    if [key_of(p) for p in plan] != [key_of(r) for r in results]:
        fail(f"results {[key_of(r) for r in results]} are not the plan {[key_of(p) for p in plan]}")
    for p, r in zip(plan, results):
        if p["params"] != r["params"]:
            fail(f"{key_of(r)}: params {r['params']} != the plan's {p['params']}")
    repetitions = doc["context"]["settings"]["repetitions"]
    for r in results:
        key = key_of(r)
        if r["status"] != "ok" or not r["verified"]:
            detail = [x["verification"] for x in r.get("ranks", [])]
            fail(f"{key}: status {r['status']}, verified {r.get('verified')}: {r.get('error')} {detail}")
        if r["repetitions"] != repetitions or len(r["window_s"]) != repetitions:
            fail(f"{key}: {r['repetitions']} repetitions, {len(r['window_s'])} windows, expected {repetitions}")
        if len(r["ranks"]) != r["active_ranks"] or r["active_ranks"] != r["ranks_per_gpu"]:
            fail(f"{key}: {len(r['ranks'])} rank records, {r['active_ranks']} active ranks")
        if sorted(x["rank"] for x in r["ranks"]) != list(range(r["ranks_per_gpu"])):
            fail(f"{key}: ranks {[x['rank'] for x in r['ranks']]}")
        primary = r["aggregate"][r["primary_metric"]]
        check_summary(f"{key} aggregate", primary, repetitions)
        if not primary["median"] > 0:
            fail(f"{key}: no throughput")
    return results


def check_allreduce(doc):
    settings = doc["context"]["settings"]
    if settings["allreduce_bytes"] != 65536:
        fail(f"settings.allreduce_bytes {settings['allreduce_bytes']}, expected 65536 (64K)")
    if doc["context"]["mix"] is not None:
        fail(f"context.mix {doc['context']['mix']!r} without --mix")
    results = check_common(doc)
    if sorted({r["ranks_per_gpu"] for r in results}) != [1, 2]:
        fail(f"rank counts {sorted({r['ranks_per_gpu'] for r in results})}, expected [1, 2]")
    values = 65536 // 8
    for r in results:
        key = key_of(r)
        c = r["collective"]
        if not isinstance(c, dict):
            fail(f"{key}: no collective record: {c!r}")
        expected = {"operation": "MPI_Allreduce", "op": "MPI_SUM", "datatype": "MPI_DOUBLE", "bytes": 65536,
                    "communicator": "active ranks"}
        for field, value in expected.items():
            if c[field] != value:
                fail(f"{key}: collective {field} {c[field]!r} != {value!r}")
        if c["ok"] is not True or c["detail"] != "":
            fail(f"{key}: collective not ok: {c['detail']!r}")
        check_summary(f"{key} collective time_per_iteration_s", c["time_per_iteration_s"], r["active_ranks"])
        if not c["time_per_iteration_s"]["median"] > 0:
            fail(f"{key}: collective time {c['time_per_iteration_s']}")
        if not 0 < c["fraction_of_iteration"] <= 1 + 1e-9:
            fail(f"{key}: fraction_of_iteration {c['fraction_of_iteration']} outside (0, 1]")
        # Every call of every active rank checked its sample (about 1024 elements plus the last; the whole
        # buffer on the first call and every 64th): at least that many values, at most all of them.
        timed_calls = r["active_ranks"] * r["iterations_per_repetition"] * r["repetitions"]
        sample = min(values, values // max(1, values // 1024) + 1)
        if not timed_calls * min(sample, values) <= c["checked_values"]:
            fail(f"{key}: checked_values {c['checked_values']}: expected at least {timed_calls * sample} "
                 f"({timed_calls} timed calls x {sample} sampled values)")
        medians = []
        for x in r["ranks"]:
            where = f"{key} rank {x['rank']}"
            t = x["collective_time_s"]
            check_summary(f"{where} collective_time_s", t, r["repetitions"])
            if not t["median"] > 0:
                fail(f"{where}: collective_time_s {t}")
            if t["median"] > x["iteration_time_s"]["median"] * (1 + 1e-9):
                fail(f"{where}: collective {t['median']} s longer than the iteration "
                     f"{x['iteration_time_s']['median']} s it is part of")
            medians.append(t["median"])
            if x["tenant"] is not None or x["latency_s"] is not None:
                fail(f"{where}: tenant {x['tenant']!r}, latency_s {x['latency_s']!r} on a matmul record")
        if sorted(medians) != sorted(c["time_per_iteration_s"]["samples"]):
            fail(f"{key}: collective samples {c['time_per_iteration_s']['samples']} are not the ranks' "
                 f"medians {medians}")
        if r["latency"] is not None or r["tenants"] is not None:
            fail(f"{key}: latency {r['latency']!r}, tenants {r['tenants']!r} on a matmul record")
        if r["params"] != {}:
            fail(f"{key}: params {r['params']} for matmul")
    print(f"check_workloads: allreduce: {len(results)} records, every collective checked")


def check_mix(doc):
    ctx = doc["context"]
    if ctx["mix"] != "matmul/fp32/64:1,nbody:1":
        fail(f"context.mix {ctx['mix']!r}")
    if ctx["settings"]["allreduce_bytes"] is not None:
        fail(f"allreduce_bytes {ctx['settings']['allreduce_bytes']} without --allreduce")
    results = check_common(doc)
    if len(ctx["plan"]) != 5 or len(results) != 5:
        fail(f"{len(ctx['plan'])} plan entries, {len(results)} records; expected 5")
    nbody = results[1]
    if nbody["kernel"] != "nbody":
        fail(f"second record {key_of(nbody)}: expected nbody alone")
    n_prec, n_size = nbody["precision"], nbody["size"]
    expected_plan = [("matmul", "fp32", 64, 1), ("nbody", n_prec, n_size, 1), ("matmul", "fp32", 64, 2),
                     ("nbody", n_prec, n_size, 2), ("mix", f"matmul/fp32/64:1,nbody/{n_prec}/{n_size}:1", 0, 2)]
    if [key_of(r) for r in results] != expected_plan:
        fail(f"plan {[key_of(r) for r in results]} != {expected_plan}")
    alone = {key_of(r): r for r in results[:4]}
    for r in results[:4]:
        if r["tenants"] is not None or any(x["tenant"] is not None for x in r["ranks"]):
            fail(f"{key_of(r)}: tenants on a record that is no mix")
    mix = results[4]
    if mix["params"] != {}:
        fail(f"mix params {mix['params']}")
    tenants = mix["tenants"]
    if not isinstance(tenants, list) or len(tenants) != 2:
        fail(f"mix tenants {tenants!r}")
    for i, (t, (kernel, prec, size)) in enumerate(zip(tenants, [("matmul", "fp32", 64), ("nbody", n_prec, n_size)])):
        where = f"tenant {i}"
        if (t["kernel"], t["precision"], t["size"], t["ranks_per_gpu"]) != (kernel, prec, size, 1):
            fail(f"{where}: {t['kernel']}/{t['precision']}/{t['size']}:{t['ranks_per_gpu']}")
        if t["params"] != {}:
            fail(f"{where}: params {t['params']}")
        if t["primary_metric"] != "flop_per_s" or t["primary_unit"] != "FLOP/s":
            fail(f"{where}: primary {t['primary_metric']} {t['primary_unit']}")
        check_summary(f"{where} throughput", t["throughput"], mix["repetitions"])
        if not t["throughput"]["median"] > 0:
            fail(f"{where}: no throughput")
        baseline = alone[(kernel, prec, size, 1)]
        want = baseline["aggregate"][baseline["primary_metric"]]["median"]
        a, s = t["alone_throughput"], t["slowdown"]
        if not isinstance(a, (int, float)) or not isinstance(s, (int, float)):
            fail(f"{where}: alone_throughput {a!r}, slowdown {s!r}: expected numbers")
        if not close(a, want):
            fail(f"{where}: alone_throughput {a} != the alone record's median {want}")
        if not close(s, a / t["throughput"]["median"]):
            fail(f"{where}: slowdown {s} != alone {a} / throughput median {t['throughput']['median']}")
        if not s > 0:
            fail(f"{where}: slowdown {s}")
        if t["latency"] is not None or t["alone_latency_p99_s"] is not None or t["latency_p99_ratio"] is not None:
            fail(f"{where}: latency figures for a kernel without requests: {t}")
    tenant_of_rank = {x["rank"]: x["tenant"] for x in mix["ranks"]}
    if tenant_of_rank != {0: 0, 1: 1}:
        fail(f"mix ranks' tenants {tenant_of_rank}, expected rank 0 -> 0, rank 1 -> 1")
    if mix["latency"] is not None or mix["collective"] is not None:
        fail("mix record with latency or collective")
    print(f"check_workloads: mix: 5 records, slowdown {[round(t['slowdown'], 3) for t in tenants]}")


def check_inference_stream(doc):
    results = check_common(doc)
    kernels = {r["kernel"] for r in results}
    if kernels != {"inference", "stream"}:
        fail(f"kernels {sorted(kernels)}")
    for r in results:
        key = key_of(r)
        if r["collective"] is not None or r["tenants"] is not None:
            fail(f"{key}: collective or tenants without --allreduce or --mix")
        if r["kernel"] == "inference":
            if r["size"] != 4:
                fail(f"{key}: size {r['size']}, expected 4")
            if r["params"] != {"hidden": 64, "layers": 2}:
                fail(f"{key}: params {r['params']}, expected hidden 64, layers 2")
            if r["primary_metric"] != "item_per_s" or r["primary_unit"] != "request/s":
                fail(f"{key}: primary {r['primary_metric']} {r['primary_unit']}")
            if r["work_per_iteration"]["items"] != 1:
                fail(f"{key}: {r['work_per_iteration']['items']} items (requests) per iteration")
            l = r["latency"]
            if not isinstance(l, dict) or (l["source"], l["unit"], l["request"]) != (
                    "host_steady_clock", "s", "one iteration"):
                fail(f"{key}: latency {l!r}")
            check_stats(f"{key} latency.overall", l["overall"])
            # Every request of the kept repetitions of every active rank.
            requests = r["active_ranks"] * r["iterations_per_repetition"] * r["repetitions"]
            counts = 0
            for x in r["ranks"]:
                check_stats(f"{key} rank {x['rank']} latency_s", x["latency_s"])
                counts += x["latency_s"]["count"]
                if x["latency_s"]["max"] > l["overall"]["max"]:
                    fail(f"{key} rank {x['rank']}: max {x['latency_s']['max']} above the overall max")
                # Each request is timed inside its iteration: on average no longer than one.
                if x["latency_s"]["mean"] > x["iteration_time_s"]["max"] * (1 + 1e-9):
                    fail(f"{key} rank {x['rank']}: mean latency {x['latency_s']['mean']} s above the longest "
                         f"mean iteration {x['iteration_time_s']['max']} s")
            if counts != l["overall"]["count"]:
                fail(f"{key}: ranks' counts add up to {counts}, overall {l['overall']['count']}")
            if l["overall"]["count"] != requests:
                fail(f"{key}: {l['overall']['count']} requests timed, expected {requests} "
                     "(ranks x iterations x repetitions)")
        else:
            if r["size"] != 65536:
                fail(f"{key}: size {r['size']}, expected 65536")
            if r["params"] != {}:
                fail(f"{key}: params {r['params']}")
            if r["primary_metric"] != "byte_per_s" or r["primary_unit"] != "B/s":
                fail(f"{key}: primary {r['primary_metric']} {r['primary_unit']}")
            if r["latency"] is not None or any(x["latency_s"] is not None for x in r["ranks"]):
                fail(f"{key}: latency on a kernel without requests")
            if not r["work_per_iteration"]["byte"] > 0:
                fail(f"{key}: no bytes per iteration")
            elements = {"fp64": 3 * 8, "fp32": 3 * 4, "copy": 2 * 8}.get(r["precision"])
            if elements is not None and r["work_per_iteration"]["byte"] != elements * r["size"]:
                fail(f"{key}: {r['work_per_iteration']['bytes']} bytes per iteration, expected "
                     f"{elements} x {r['size']} (counting rule)")
    print(f"check_workloads: inference_stream: {len(results)} records")


def main():
    if len(sys.argv) != 3:
        fail("usage: check_workloads.py FILE SCENARIO")
    path, scenario = sys.argv[1], sys.argv[2]
    with open(path, encoding="utf-8") as handle:
        doc = json.load(handle)
    checks = {"allreduce": check_allreduce, "mix": check_mix, "inference_stream": check_inference_stream}
    if scenario not in checks:
        fail(f"unknown scenario {scenario!r}")
    checks[scenario](doc)


if __name__ == "__main__":
    main()
