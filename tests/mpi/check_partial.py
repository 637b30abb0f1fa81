#!/usr/bin/env python3
"""Checks what a failed, killed or resumed mpsbench run left in its results file.

usage: check_partial.py FILE --plan 16:1,16:2,... [--expect 16:1,16:2] [--complete true|false]
                        [--failed 16:2 --error-pattern TEXT] [--prefix-or-absent]
Every record must be whole (an ok record measured, a failed one with a reason),
unique, of a configuration in --plan, in plan order. --expect: exactly these
configurations (size:ranks_per_gpu). --prefix-or-absent: the file may be
missing; else its results must be the first k configurations of the plan.
"""
import argparse
import json
import os
import sys


def fail(message):
    print(f"check_partial: {message}", file=sys.stderr)
    sys.exit(1)


def keys(text):
    return [tuple(int(v) for v in item.split(":")) for item in text.split(",")] if text else []


def main():
    p = argparse.ArgumentParser()
    p.add_argument("file")
    p.add_argument("--plan", required=True)
    p.add_argument("--expect")
    p.add_argument("--complete", choices=["true", "false"])
    p.add_argument("--failed", default="")
    p.add_argument("--error-pattern", default="")
    p.add_argument("--prefix-or-absent", action="store_true")
    a = p.parse_args()
    if a.prefix_or_absent and not os.path.exists(a.file):
        print("check_partial: no results file (killed before the first write)")
        return
    with open(a.file, encoding="utf-8") as handle:
        try:
            doc = json.load(handle)
        except json.JSONDecodeError as e:
            fail(f"{a.file} is not valid JSON (torn write?): {e}")
    if doc.get("schema") != "mpsbench-results" or not isinstance(doc.get("complete"), bool):
        fail("not an mpsbench-results document")
    plan = keys(a.plan)
    failed = set(keys(a.failed))
    got = []
    for r in doc["results"]:
        key = (r["size"], r["ranks_per_gpu"])
        if key in got:
            fail(f"duplicate result {key}")
        got.append(key)
        if key not in plan:
            fail(f"result {key} is not in the plan")
        if key in failed:
            if r["status"] != "failed" or a.error_pattern not in (r["error"] or ""):
                fail(f"{key}: expected failed with '{a.error_pattern}', got {r['status']}: {r['error']}")
            if r["aggregate"] is not None or r["ranks"] or r["window_s"]:
                fail(f"{key}: a failed record must not carry measurements")
        else:
            if r["status"] != "ok" or r["error"] is not None or not r["verified"]:
                fail(f"{key}: expected ok and verified, got {r['status']}: {r['error']}")
            if len(r["ranks"]) != r["active_ranks"] or len(r["window_s"]) != r["repetitions"]:
                fail(f"{key}: incomplete record")
    if got != sorted(got, key=plan.index):
        fail(f"results {got} are not in plan order")
    if a.expect is not None and got != keys(a.expect):
        fail(f"results {got} != expected {keys(a.expect)}")
    if a.prefix_or_absent and got != plan[:len(got)]:
        fail(f"results {got} are not a prefix of the plan")
    if a.complete and doc["complete"] != (a.complete == "true"):
        fail(f"complete is {doc['complete']}, expected {a.complete}")
    if doc["complete"] and got != plan:
        fail(f"complete, but results {got} != plan {plan}")
    print(f"check_partial: ok: {len(got)} results, complete {doc['complete']}")


if __name__ == "__main__":
    main()
