#!/usr/bin/env python3
"""Checks the energy, gpu_activity and timing records of an mpsbench results file (energy_scenarios.sh).

cpu:  every result's energy and gpu_activity are unavailable with the reason "cpu device", never a number.
fake: every result's energy comes from the scripted 250 W GPU: mean power within its stated uncertainty,
      joules = mean power x the kept window time, joules_per_unit = joules / the primary metric's work over
      the kept repetitions; the metered work at least --energy-min-span, the counter's span inside it and of
      at least three updates; the GPM figures exactly the fake's.
Both: every timing field present and consistent (windows <= repetitions <= wall; the phases add up to
      wall), the context's timing present, and configurations after the first of a workload kept it.
usage: check_energy.py FILE cpu|fake
"""
import json
import sys

PHASES = ("setup_s", "first_run_s", "warmup_s", "metering_s", "repetitions_s", "verification_s", "gather_s",
          "report_s")


def fail(message):
    print(f"check_energy: {message}", file=sys.stderr)
    sys.exit(1)


def close(a, b, rel=1e-9):
    return abs(a - b) <= rel * max(abs(a), abs(b), 1e-300)


def check_timing(doc):
    for r in doc["results"]:
        key = (r["kernel"], r["precision"], r["size"], r["ranks_per_gpu"])
        t = r["timing"]
        for name in PHASES + ("windows_s", "wall_s"):
            if not t[name] >= 0:
                fail(f"{key}: timing.{name} = {t[name]}")
        if not t["windows_s"] <= t["repetitions_s"] + 1e-9 <= t["wall_s"] + 2e-9:
            fail(f"{key}: windows {t['windows_s']} <= repetitions {t['repetitions_s']} <= wall {t['wall_s']} fails")
        if not sum(r["window_s"]) <= t["windows_s"] + 1e-9:
            fail(f"{key}: kept windows {sum(r['window_s'])} exceed every window {t['windows_s']}")
        phases = sum(t[p] for p in PHASES)
        if abs(phases - t["wall_s"]) > 0.05 * t["wall_s"] + 0.05:
            fail(f"{key}: phases add up to {phases}, wall {t['wall_s']}")
    job = doc["context"]["timing"]
    walls = sum(r["timing"]["wall_s"] for r in doc["results"])
    if not walls <= job["configurations_s"] + 0.05 <= job["total_s"] + 0.1:
        fail(f"context timing {job} against the walls' sum {walls}")
    previous = None
    for r in doc["results"]:
        same = previous is not None and r["kind"] == "kernel" and previous["kind"] == "kernel" and all(
            r[k] == previous[k] for k in ("kernel", "precision", "size"))
        if same and r["timing"]["reused_instances"] < min(previous["active_ranks"], r["active_ranks"]):
            fail(f"{r['kernel']} {r['size']} x{r['ranks_per_gpu']}: {r['timing']['reused_instances']} instances "
                 f"kept of {previous['active_ranks']}")
        previous = r


def check_cpu(doc):
    for r in doc["results"]:
        for field in ("energy", "gpu_activity"):
            record = r[field]
            if record["available"] or record.get("reason") != "cpu device" or "joules" in record \
                    or "sm_active" in record:
                fail(f"{r['kernel']}: {field} = {record}")


def check_fake(doc):
    min_span = doc["context"]["settings"]["energy_min_span_s"]
    for r in doc["results"]:
        key = (r["kernel"], r["precision"], r["size"], r["ranks_per_gpu"])
        e = r["energy"]
        if not e["available"]:
            fail(f"{key}: energy unavailable: {e.get('reason')}")
        kept = sum(r["window_s"])
        if not close(e["joules"], e["mean_power_w"] * kept):
            fail(f"{key}: joules {e['joules']} != {e['mean_power_w']} W x {kept} s")
        primary = r["aggregate"][r["primary_metric"]]["samples"]
        work = sum(rate * w for rate, w in zip(primary, r["window_s"]))
        if not close(e["joules_per_unit"], e["joules"] / work, 1e-6):
            fail(f"{key}: joules_per_unit {e['joules_per_unit']} != {e['joules']} / {work}")
        if abs(e["mean_power_w"] - 250) > 250 * e["uncertainty"] + 1e-9:
            fail(f"{key}: {e['mean_power_w']} W is not 250 W within {e['uncertainty']}")
        # The engine stretches the metered work (the stretch and the repetitions) to min_span, reckoning the
        # repetitions at the shortest window seen: they may run a little faster than that, never by a quarter.
        t = r["timing"]
        work = t["metering_s"] + t["repetitions_s"]
        if t["metering_s"] <= 0:
            fail(f"{key}: no metering time with --energy-min-span {min_span}")
        if work < 0.75 * min_span:
            fail(f"{key}: the metered work lasted {work} s, asked at least {min_span} s")
        # The counter's span lies between its first and last update inside that work: never longer than it,
        # shorter by a tick (0.05 s here) at each end and by however long the monitor thread then waited for a
        # core (a tenth of a second on a loaded 2-core machine), so no time bound below is safe. What no
        # stretch could give: three updates of the counter inside the work itself (3 x 0.02 s of repetitions
        # alone hold at most two, or borrow the first from the warm-up).
        g = e["per_gpu"][0]
        if not (e["span_s"] <= work + 1e-6 and g["counter_updates"] >= 3 and not g["from_warmup"]):
            fail(f"{key}: metered {e['span_s']} s with {g['counter_updates']} counter updates "
                 f"(from the warm-up: {g['from_warmup']}) in {work} s of work, asked at least {min_span} s")
        if not e["unit"].startswith("J/") or len(e["per_gpu"]) != 1:
            fail(f"{key}: {e}")
        a = r["gpu_activity"]
        got = (a["available"], a["sm_active"], a["sm_occupancy"], a["dram_bw"], a["tensor_active"])
        if got != (True, 80, 40, 30, 10):
            fail(f"{key}: gpu_activity {a}")


def main():
    path, scenario = sys.argv[1], sys.argv[2]
    with open(path, encoding="utf-8") as f:
        doc = json.load(f)
    if not doc["complete"] or not doc["results"]:
        fail("an incomplete or empty file")
    check_timing(doc)
    {"cpu": check_cpu, "fake": check_fake}[scenario](doc)
    print(f"check_energy: {len(doc['results'])} results, {scenario}: energy, activity and timing as expected")


if __name__ == "__main__":
    main()
