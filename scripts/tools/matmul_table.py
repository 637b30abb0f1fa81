#!/usr/bin/env python3
"""Single-rank and 8-rank matmul throughput from an mpsbench results file,
beside a bare cuBLAS call timed the same way (bare-gemm's log).

usage: matmul_table.py RESULTS.json BARE_GEMM.log
(either may be gzip-compressed, as results/ stores them: .json.gz, .log.gz)
"""
import re
import sys

from results_io import load_json, open_text


def main():
    results = load_json(sys.argv[1])["results"]
    bare = {}
    for line in open_text(sys.argv[2]):
        m = re.match(r"bare-gemm (\S+) N=(\d+): ([\d.]+) TFLOP/s", line)
        if m:
            bare[(m.group(1), int(m.group(2)))] = float(m.group(3))
    by_key = {(r["precision"], r["size"], r["ranks_per_gpu"]): r for r in results if r["kernel"] == "matmul"}
    ranks = sorted({k[2] for k in by_key})
    top = ranks[-1]
    print(f"{'prec':5} {'N':>5} {'1 rank TFLOP/s':>15} {'bare cuBLAS':>12} {'suite/bare':>10} "
          f"{f'{top} ranks agg':>14} {'speedup':>8} {'fairness':>8} {'verified':>8}")
    for (prec, n, k), r in sorted(by_key.items(), key=lambda kv: (["fp32", "tf32", "bf16"].index(kv[0][0]),
                                                                   kv[0][1], kv[0][2])):
        if k != 1:
            continue
        one = r["aggregate"]["flop_per_s"]["median"] / 1e12
        many = by_key.get((prec, n, top))
        b = bare.get((prec, n))
        ratio = f"{one / b:10.3f}" if b else f"{'-':>10}"
        agg = many["aggregate"]["flop_per_s"]["median"] / 1e12 if many else float("nan")
        verified = all(x["verified"] for key, x in by_key.items() if key[:2] == (prec, n))
        print(f"{prec:5} {n:5d} {one:15.1f} {b if b else float('nan'):12.1f} {ratio} {agg:14.1f} "
              f"{many['speedup_vs_one_rank_per_gpu'] if many else float('nan'):8.2f} "
              f"{many['jain_fairness'] if many else float('nan'):8.3f} {str(verified):>8}")


if __name__ == "__main__":
    main()
