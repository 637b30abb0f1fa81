#!/usr/bin/env python3
"""Checks the warm-up, noise, clocks and cpu records of an mpsbench CPU run.

usage: check_adaptive.py FILE NAME (NAME: a run of adaptive_scenarios.sh)
"""
import json
import sys


def fail(message):
    print(f"check_adaptive: {message}", file=sys.stderr)
    sys.exit(1)


def check_cpu(r, key, settings):
    """The host-CPU record: one entry per kept repetition, its counts, and the rule its flags follow."""
    c = r["cpu"]
    n = r["repetitions"]
    if c["probe"] != "relax_sweep_2048x8" or c["threshold"] != settings["cpu_threshold"]:
        fail(f"{key}: cpu probe {c['probe']!r}, threshold {c['threshold']} (settings {settings['cpu_threshold']})")
    if not isinstance(c["reference_probe_s"], float) or not 0 < c["reference_probe_s"] < 1e-3:
        fail(f"{key}: reference probe {c['reference_probe_s']} s")
    for name in ("repetition_slowed", "probe_ratio", "steal_s", "run_delay_s"):
        if c[name] is None and name in ("steal_s", "run_delay_s") and c["note"]:
            continue
        if len(c[name]) != n:
            fail(f"{key}: cpu {name} {c[name]} for {n} repetitions")
    if c["slowed_repetitions"] != sum(c["repetition_slowed"]):
        fail(f"{key}: slowed_repetitions {c['slowed_repetitions']} != {c['repetition_slowed']}")
    for slowed, ratio in zip(c["repetition_slowed"], c["probe_ratio"]):
        if slowed != (ratio > 1 + c["threshold"]) or ratio < 1:
            fail(f"{key}: slowed {slowed} disagrees with ratio {ratio} and threshold {c['threshold']}")
    most = settings["cpu_retries"] if settings["discard_cpu_slowed"] else 0
    if not 0 <= c["discarded_repetitions"] <= most:
        fail(f"{key}: {c['discarded_repetitions']} CPU-slowed repetitions discarded, at most {most}")


def check_common(doc):
    settings = doc["context"]["settings"]
    for r in doc["results"]:
        key = (r["kernel"], r["precision"], r["size"], r["ranks_per_gpu"])
        if r["status"] != "ok" or not r["verified"]:
            fail(f"{key}: not verified")
        n = r["repetitions"]
        if len(r["window_s"]) != n or any(len(x["iteration_time_s"]["samples"]) != n for x in r["ranks"]):
            fail(f"{key}: {n} repetitions but {len(r['window_s'])} windows or unequal rank samples")
        w = r["warmup"]
        if w["windows"] < 2 or (w["stable"] and w["seconds"] < settings["warmup_time_s"]):
            fail(f"{key}: warm-up {w} ends before {settings['warmup_time_s']} s or with one window")
        if not w["stable"] and w["seconds"] < 10 * settings["warmup_time_s"]:
            fail(f"{key}: warm-up gave up before its cap: {w}")
        c = r["clocks"]
        if c["source"] != "none" or c["gpus"] or c["note"] != "the CPU device has no GPU clocks":
            fail(f"{key}: clocks on the CPU device: {c}")
        if len(c["repetition_affected"]) != n or c["affected_repetitions"] != sum(c["repetition_affected"]):
            fail(f"{key}: repetition_affected {c['repetition_affected']} for {n} repetitions")
        check_cpu(r, key, settings)
        noise = r["noise"]
        if noise["estimator"] != "median_se_normal" or not isinstance(noise["relative"], float):
            fail(f"{key}: noise {noise}")
        if noise["target"] != settings["max_noise"]:
            fail(f"{key}: noise target {noise['target']} != settings {settings['max_noise']}")
        if noise["target"] is None:
            if noise["met"] is not None:
                fail(f"{key}: met without a target: {noise}")
        elif noise["met"] != (noise["relative"] <= noise["target"]):
            fail(f"{key}: met {noise['met']} disagrees with {noise['relative']} <= {noise['target']}")


def main():
    path, name = sys.argv[1], sys.argv[2]
    with open(path, encoding="utf-8") as handle:
        doc = json.load(handle)
    if not doc["complete"] or not doc["results"]:
        fail("incomplete or empty run")
    check_common(doc)
    settings = doc["context"]["settings"]
    results = doc["results"]
    if name == "fixed":
        if settings["max_noise"] is not None or settings["max_time_s"] is not None:
            fail(f"fixed run with adaptive settings {settings}")
        if any(r["repetitions"] != 3 for r in results):
            fail("a fixed run did not take exactly --repetitions")
    elif name == "minimum":
        if settings["max_noise"] != 0.5 or settings["max_time_s"] != 10:
            fail(f"settings {settings}: expected max_noise 0.5 and the default max_time_s 10")
        for r in results:
            if r["repetitions"] != 3 or r["noise"]["met"] is not True:
                fail(f"{r['kernel']} k={r['ranks_per_gpu']}: {r['repetitions']} repetitions, noise {r['noise']}")
    elif name in ("time", "streams"):
        budget = settings["max_time_s"]
        for r in results:
            key = (r["kernel"], r["size"], r["ranks_per_gpu"])
            if r["noise"]["met"] is not False:
                fail(f"{key}: an unreachable target was met: {r['noise']}")
            if not 3 < r["repetitions"] < 100:
                fail(f"{key}: {r['repetitions']} repetitions: expected the budget, not the minimum or the cap")
            # No repetition starts that would end past the budget (by the median window).
            if sum(r["window_s"]) > budget + max(r["window_s"]):
                fail(f"{key}: windows add up to {sum(r['window_s'])} s, past the {budget} s budget")
            if name == "streams" and r["instances_per_rank"] != r["ranks_per_gpu"]:
                fail(f"{key}: {r['instances_per_rank']} instances per rank")
    elif name in ("throttle-discard", "throttle-keep"):
        discard = name == "throttle-discard"
        if settings["discard_throttled"] != discard or settings["throttle_retries"] != 3 - discard:
            fail(f"settings {settings}")
        for index, r in enumerate(results, 1):
            c = r["clocks"]
            if index == 2:  # every repetition reported throttled by rank 1
                want = (2 if discard else 0, r["repetitions"], [True] * r["repetitions"])
            else:
                want = (0, 0, [False] * r["repetitions"])
            got = (c["discarded_repetitions"], c["affected_repetitions"], c["repetition_affected"])
            if got != want or r["repetitions"] != 3:
                fail(f"configuration {index}: (discarded, affected, flags) {got} != {want}, "
                     f"{r['repetitions']} repetitions")
    elif name in ("cpu-discard", "cpu-keep"):
        discard = name == "cpu-discard"
        if settings["discard_cpu_slowed"] != discard or settings["cpu_retries"] != 3 - discard:
            fail(f"settings {settings}")
        for index, r in enumerate(results, 1):
            c = r["cpu"]
            if r["repetitions"] != 3 or r["clocks"]["discarded_repetitions"] != 0:
                fail(f"configuration {index}: {r['repetitions']} repetitions, clocks {r['clocks']}")
            if index == 2:  # every repetition reported CPU-slowed by rank 1, twice the threshold's ratio
                got = (c["discarded_repetitions"], c["slowed_repetitions"], c["repetition_slowed"])
                if got != (2 if discard else 0, 3, [True] * 3):
                    fail(f"configuration 2: (discarded, slowed, flags) {got}")
                if any(ratio < 2 * (1 + c["threshold"]) for ratio in c["probe_ratio"]):
                    fail(f"configuration 2: probe ratios {c['probe_ratio']} below the injected one")
    elif name == "cpu-unreadable":
        for r in results:
            c = r["cpu"]
            if c["steal_s"] is not None or c["run_delay_s"] is not None or "cannot read" not in c["note"]:
                fail(f"unreadable counters written as {c}")
    else:
        fail(f"unknown run {name}")
    print(f"check_adaptive: {name}: {len(results)} results as expected")


if __name__ == "__main__":
    main()
