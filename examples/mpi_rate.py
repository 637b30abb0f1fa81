#!/usr/bin/env python3
"""A small MPI program that reports its own throughput, to farm with `mpsbench-sweep --app-launcher mpirun`.

    mpirun -np 4 python3 examples/mpi_rate.py [--size N] [--steps S] [--device auto|gpu|cpu] [--progress]

Every rank multiplies two N x N matrices S times (PyTorch on its GPU where there is one, else NumPy on the
CPU, else plain Python), timing its own loop after one untimed step; then rank 0 prints each rank's rate and

    steps_per_s: X        the sum over the ranks of their steps per second (what --app-metric reads)
    result=ok             every rank's last product agreed with a float64 reference on a corner block

With --progress, rank 0 also prints "K,steps" after each of its steps (K: its steps so far, flushed: what
--app-progress reads). A rank sees one GPU under the sweep (harness/sweep/app-rank-gpu sets
CUDA_VISIBLE_DEVICES); alone it takes GPU (node-local rank mod the GPUs it sees).

Exit status: 0 verified; 1 a product disagreed; 2 bad input or a missing module (mpi4py; PyTorch with CUDA for
--device gpu), one `error:` line.
"""
import argparse
import os
import sys
import time


def fail(message, code=2):
    print(f"mpi_rate: error: {message}", file=sys.stderr, flush=True)
    sys.exit(code)


def backend(device, local_rank):
    """(name, matmul(a, b), make(n, seed), sync()) for the device asked for."""
    if device in ("auto", "gpu"):
        try:
            import torch
            if torch.cuda.is_available():
                gpu = torch.device("cuda", local_rank % torch.cuda.device_count())
                torch.cuda.set_device(gpu)

                def make(n, seed):
                    g = torch.Generator(device=gpu).manual_seed(seed)
                    return torch.rand((n, n), generator=g, device=gpu, dtype=torch.float32)

                return "torch-cuda", torch.matmul, make, torch.cuda.synchronize
        except ImportError:
            pass
        if device == "gpu":
            fail("--device gpu needs PyTorch with CUDA (import torch; torch.cuda.is_available())")
    try:
        import numpy as np

        def make(n, seed):
            return np.random.default_rng(seed).random((n, n), dtype=np.float32)

        return "numpy", np.matmul, make, lambda: None
    except ImportError:
        import random

        def make(n, seed):
            rng = random.Random(seed)
            return [[rng.random() for _ in range(n)] for _ in range(n)]

        def matmul(a, b):
            cols = list(zip(*b))
            return [[sum(x * y for x, y in zip(row, col)) for col in cols] for row in a]

        return "python", matmul, make, lambda: None


def as_lists(m, name):
    if name == "python":
        return m
    return m.double().cpu().tolist() if name == "torch-cuda" else m.astype(float).tolist()


def check(name, a, b, c, k=8):
    """The k x k corner of c = a b against a float64 product of a's first k rows and b's first k columns (only
    those are copied to the host and into Python lists)."""
    if name == "python":
        rows, cols, got = a[:k], [list(col) for col in zip(*b)][:k], c
    else:
        rows, got = as_lists(a[:k], name), as_lists(c[:k, :k], name)
        cols = [list(col) for col in zip(*as_lists(b[:, :k], name))]
    for i, row in enumerate(rows):
        for j, col in enumerate(cols):
            want = sum(x * y for x, y in zip(row, col))
            if abs(got[i][j] - want) > 1e-3 * max(1.0, abs(want)):
                return False
    return True


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--size", type=int, default=2048, help="matrix size N (default: %(default)s)")
    p.add_argument("--steps", type=int, default=50, help="timed steps per rank (default: %(default)s)")
    p.add_argument("--device", choices=("auto", "gpu", "cpu"), default="auto", help="(default: %(default)s)")
    p.add_argument("--progress", action="store_true", help="rank 0 prints 'K,steps' after each step")
    args = p.parse_args()
    if not 1 <= args.size <= 65536 or not 1 <= args.steps <= 10**7:
        fail("--size must be in [1, 65536] and --steps in [1, 10000000]")
    try:
        from mpi4py import MPI
    except ImportError:
        fail("mpi4py is not installed for this python3 (pip install mpi4py)")
    comm = MPI.COMM_WORLD
    rank = comm.Get_rank()
    local = int(os.environ.get("OMPI_COMM_WORLD_LOCAL_RANK", os.environ.get("SLURM_LOCALID", "0")))
    name, matmul, make, sync = backend(args.device, local)
    a, b = make(args.size, 2 * rank + 1), make(args.size, 2 * rank + 2)
    c = matmul(a, b)  # untimed: the first step pays for context, kernels and caches
    sync()
    comm.Barrier()
    started = time.perf_counter()
    for step in range(args.steps):
        c = matmul(a, b)
        if args.progress and rank == 0:
            sync()
            print(f"{step + 1},steps", flush=True)
    sync()
    rate = args.steps / (time.perf_counter() - started)
    ok = check(name, a, b, c)
    rates, oks = comm.gather(rate, root=0), comm.gather(ok, root=0)
    if rank == 0:
        for r, value in enumerate(rates):
            print(f"rank {r} ({name}): {value:.3f} steps/s")
        print(f"steps_per_s: {sum(rates):.6g}")
        print("result=ok" if all(oks) else "result=wrong", flush=True)
    return 0 if comm.bcast(all(oks) if rank == 0 else None, root=0) else 1


if __name__ == "__main__":
    sys.exit(main())
