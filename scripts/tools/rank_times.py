#!/usr/bin/env python3
"""Per-process view of mpsbench results files, plain or .json.gz (stdlib only, for the GPU machine).

usage: rank_times.py FILE... [--size LIST] [--ranks-per-gpu LIST] [--mode LIST]

For each result: the aggregate throughput in every unit the kernel reports
(nbody: FLOP/s and interactions/s, as the CUDA samples print them), then one row
per active rank (a streams result: per instance): the SMs its context sees, its
median time per iteration (wall clock and CUDA events), its own throughput
(its work / its own elapsed time) and its share of the sum of the ranks'
throughputs (the Jain fairness index is computed from these), plus the
kernel's per-iteration times (hybrid: CPU and GPU phase).
"""
import argparse
import statistics

from results_io import load_json

PREFIXES = [(1e15, "P"), (1e12, "T"), (1e9, "G"), (1e6, "M"), (1e3, "k")]


def si(value, unit):
    for scale, prefix in PREFIXES:
        if abs(value) >= scale:
            return f"{num(value / scale)} {prefix}{unit}"
    return f"{num(value)} {unit}"


def num(value):
    return f"{value:#.3g}".rstrip(".")


def seconds(value):
    if value is None:
        return "-"
    if value >= 1:
        return f"{value:.3f} s"
    if value >= 1e-3:
        return f"{value * 1e3:.3f} ms"
    return f"{value * 1e6:.1f} us"


def int_list(text):
    return {int(x) for x in text.split(",") if x.strip()}


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n", 2)[2], formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("files", nargs="+", metavar="FILE")
    p.add_argument("--size", type=int_list, help="only these sizes (comma list)")
    p.add_argument("--ranks-per-gpu", type=int_list, help="only these ranks per GPU (comma list)")
    p.add_argument("--mode", help="only these modes (comma list, e.g. timeslice,mps)")
    args = p.parse_args()
    modes = set(args.mode.split(",")) if args.mode else None
    for path in args.files:
        doc = load_json(path)
        print(f"== {path}")
        for r in doc["results"]:
            if (args.size and r["size"] not in args.size) or \
                    (args.ranks_per_gpu and r["ranks_per_gpu"] not in args.ranks_per_gpu) or \
                    (modes and r["mode"] not in modes):
                continue
            mode = r["mode"] + (f" {r['mps_active_thread_percentage']}%"
                                if r.get("mps_active_thread_percentage") is not None else "")
            head = f"{r['kernel']} {r['precision']} size {r['size']}, {r['ranks_per_gpu']} ranks/gpu, {mode}"
            if r.get("status") == "failed":
                print(f"{head}: FAILED: {r.get('error')}")
                continue
            agg, work = r["aggregate"], r["work_per_iteration"]
            rates = {"flop_per_s": si(agg["flop_per_s"]["median"], "FLOP/s") if work.get("flop") else None,
                     "item_per_s": si(agg["item_per_s"]["median"], work["item_unit"] + "/s")
                     if work.get("items") and work.get("item_unit") else None}
            primary = rates.pop(r["primary_metric"], None) or si(agg[r["primary_metric"]]["median"], r["primary_unit"])
            others = [v for v in rates.values() if v]
            rate = primary + (f" ({', '.join(others)})" if others else "")
            print(f"{head}: aggregate {rate}; {r['iterations_per_repetition']} iterations per "
                  f"repetition, window {seconds(statistics.median(r['window_s']))}, fairness {r['jain_fairness']:.3f}, "
                  f"{'verified' if r['verified'] else 'NOT VERIFIED'}")
            ranks = r["ranks"]
            total = sum(x["throughput_per_s"] for x in ranks) or 1.0
            unit = r["primary_unit"]
            details = sorted({k for x in ranks for k in (x.get("kernel_details") or {}) if k.endswith("_s")})
            cols = ["rank", "SMs", "iteration", "GPU time", "throughput", "share"] + details
            rows = []
            for x in ranks:
                who = f"{x['rank']}" + (f".{x['instance']}" if r.get("instances_per_rank", 1) > 1 else "")
                gpu_t = x.get("gpu_iteration_time_s")
                row = [who, str(x.get("sm_count") or "-"), seconds(x["iteration_time_s"]["median"]),
                       seconds(gpu_t["median"] if gpu_t else None), si(x["throughput_per_s"], unit),
                       f"{100 * x['throughput_per_s'] / total:.1f}%"]
                for k in details:
                    v = (x.get("kernel_details") or {}).get(k)
                    row.append(seconds(v))
                rows.append(row)
            widths = [max(len(c), *(len(row[i]) for row in rows)) for i, c in enumerate(cols)]
            print("  " + "  ".join(c.rjust(w) for c, w in zip(cols, widths)))
            for row in rows:
                print("  " + "  ".join(c.rjust(w) for c, w in zip(row, widths)))


if __name__ == "__main__":
    try:
        main()
    except BrokenPipeError:  # | head
        pass
