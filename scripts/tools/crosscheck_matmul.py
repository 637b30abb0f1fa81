#!/usr/bin/env python3
"""An independent check of mpsbench's matmul throughput: PyTorch + mpi4py.

Each MPI rank multiplies two N x N matrices with torch.matmul (cuBLAS, like
mpsbench, but through another stack: PyTorch's allocator, handles and
heuristics) on its GPU (node-local rank mod GPU count). The active ranks run
together: barrier, start, iterations, synchronise, end; the window is
max(end) - min(start) over the ranks, and the aggregate throughput is
ranks x iterations x 2 N^3 / window, as mpsbench counts it. The median over
--repetitions windows is printed next to mpsbench's median for the same
kernel, precision, size, ranks per GPU and mode, read from a results file
(plain or gzip-compressed, as results/ stores them).

  mpirun -np K python3 scripts/tools/crosscheck_matmul.py --size 4096 --precision fp32 \\
      --results mpsbench.json --mode timeslice

Run it in the same sharing mode as the results it is compared with (under a
running MPS daemon for mode mps). Needs PyTorch with CUDA and mpi4py; one line
per check on rank 0: probe, mpsbench and their relative difference.
"""
import argparse
import statistics
import sys
import time

from results_io import load_json

PRECISIONS = {"fp32": ("float32", False), "tf32": ("float32", True), "fp16": ("float16", False),
              "bf16": ("bfloat16", False)}


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--size", type=int, required=True)
    p.add_argument("--precision", choices=sorted(PRECISIONS), default="fp32")
    p.add_argument("--min-time", type=float, default=0.25, help="seconds per window (default: %(default)s)")
    p.add_argument("--repetitions", type=int, default=5)
    p.add_argument("--results", help="mpsbench results file to compare with")
    p.add_argument("--mode", default="timeslice", help="mode of the mpsbench result to compare with")
    args = p.parse_args()

    import torch
    from mpi4py import MPI

    comm = MPI.COMM_WORLD
    local = comm.Split_type(MPI.COMM_TYPE_SHARED).Get_rank()
    torch.cuda.set_device(local % torch.cuda.device_count())
    dtype_name, tf32 = PRECISIONS[args.precision]
    torch.backends.cuda.matmul.allow_tf32 = tf32
    torch.backends.cuda.matmul.allow_fp16_reduced_precision_reduction = False
    torch.backends.cuda.matmul.allow_bf16_reduced_precision_reduction = False
    dtype = getattr(torch, dtype_name)
    n = args.size
    gen = torch.Generator(device="cuda").manual_seed(1 + comm.Get_rank())
    a = torch.rand(n, n, device="cuda", dtype=dtype, generator=gen)
    b = torch.rand(n, n, device="cuda", dtype=dtype, generator=gen)
    c = torch.empty(n, n, device="cuda", dtype=dtype)

    def window(iterations):
        comm.Barrier()
        start = time.perf_counter()
        for _ in range(iterations):
            torch.matmul(a, b, out=c)
        torch.cuda.synchronize()
        end = time.perf_counter()
        # one clock per node is enough here: the probe runs on one node
        return comm.allreduce(end, op=MPI.MAX) - comm.allreduce(start, op=MPI.MIN)

    iterations = 1
    elapsed = window(iterations)
    while elapsed < args.min_time:  # the same on every rank: the reduced window decides
        iterations = max(iterations + 1, int(iterations * min(100.0, 1.2 * args.min_time / max(elapsed, 1e-9))))
        elapsed = window(iterations)
    for _ in range(2):  # warm the clocks at the measured batch size
        window(iterations)
    flops = comm.Get_size() * iterations * 2.0 * n ** 3
    rates = [flops / window(iterations) for _ in range(args.repetitions)]
    check = torch.matmul(a[:1].double(), b.double())
    rel = float((c[:1].double() - check).abs().max() / check.abs().max())
    if comm.Get_rank() != 0:
        return 0
    probe = statistics.median(rates)
    line = (f"probe: matmul {args.precision} N={n} ranks={comm.Get_size()} {args.mode}: "
            f"{probe / 1e12:.2f} TFLOP/s (median of {len(rates)}, {iterations} iterations/window, max rel error {rel:.1e})")
    if args.results:
        doc = load_json(args.results)
        ours = [r for r in doc["results"] if r["kernel"] == "matmul" and r["precision"] == args.precision
                and r["size"] == n and r["ranks_per_gpu"] == comm.Get_size() and r["mode"] == args.mode
                and r["status"] == "ok"]
        if ours:
            mine = ours[0]["aggregate"]["flop_per_s"]["median"]
            line += f"; mpsbench {mine / 1e12:.2f} TFLOP/s; probe/mpsbench {probe / mine:.3f}"
        else:
            line += "; no matching mpsbench result"
    print(line, flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
