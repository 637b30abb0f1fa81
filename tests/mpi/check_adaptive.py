#!/usr/bin/env python3
"""Checks the warm-up, noise and clocks records of an mpsbench CPU run.

usage: check_adaptive.py FILE NAME (NAME: a run of adaptive_scenarios.sh)
"""
import json
import sys


def fail(message):
    print(f"check_adaptive: {message}", file=sys.stderr)
    sys.exit(1)


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
    else:
        fail(f"unknown run {name}")
    print(f"check_adaptive: {name}: {len(results)} results as expected")


if __name__ == "__main__":
    main()
