#!/usr/bin/env python3
"""Compact table of mpsbench results files, plain or .json.gz (stdlib only, for the GPU machine).

usage: results_table.py FILE... [--details]
Prints kernel, precision, size, ranks/gpu, mode, aggregate throughput (GFLOP/s
and items/s), speedup, fairness, verified; with --details the mean of each
kernel_details entry over the active ranks.
"""
import statistics
import sys

from results_io import load_json


def main():
    files = [a for a in sys.argv[1:] if not a.startswith("--")]
    details = "--details" in sys.argv
    print(f"{'kernel':7} {'precision':14} {'size':>8} {'k':>3} {'mode':9} {'GFLOP/s':>10} {'items/s':>10} "
          f"{'speedup':>7} {'fair':>5} {'ok':>3}" + ("  details" if details else ""))
    for path in files:
        for r in load_json(path)["results"]:
            agg = r["aggregate"]
            line = (f"{r['kernel']:7} {r['precision']:14} {r['size']:8d} {r['ranks_per_gpu']:3d} {r['mode']:9} "
                    f"{agg['flop_per_s']['median'] / 1e9:10.1f} {agg['item_per_s']['median']:10.3g} "
                    f"{r['speedup_vs_one_rank_per_gpu'] or 0:7.2f} {r['jain_fairness']:5.3f} "
                    f"{'yes' if r['verified'] else 'NO':>3}")
            if details:
                names = sorted({n for x in r["ranks"] for n in x["kernel_details"]})
                line += "  " + " ".join(
                    f"{n}={statistics.mean(x['kernel_details'][n] for x in r['ranks']) * 1e6:.1f}us"
                    if n.endswith("_s") else f"{n}={statistics.mean(x['kernel_details'][n] for x in r['ranks']):.3g}"
                    for n in names)
            print(line)


if __name__ == "__main__":
    main()
