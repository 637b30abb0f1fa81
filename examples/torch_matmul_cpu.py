#!/usr/bin/env python3
"""torch_matmul_cpu: the workshop's classic "matrix product on the GPU, then some CPU work", for farming.

Each of --steps steps multiplies two --size x --size fp32 matrices on the GPU
(TF32 off, so it is real FP32 work), waits for the product, then does a fixed
amount of CPU work (--cpu-work sorts of a 200,000-element float64 array;
deterministic work, not a sleep, so it slows down when copies share CPU
cores): a program that alternates between the GPU and the CPU and leaves the
GPU idle while it computes on the host. At the end one entry of the last
product is checked against a float64 dot product on the CPU.

Measured on one H100 SXM machine (PyTorch 2.11, CUDA 13.0): an 8192 fp32
product takes about 23 ms and one sort about 3.5 ms, so a default step is
about 23 ms on the GPU, then about 21 ms on the CPU (0.57 s for the 10 steps).
Run alone it takes 5 to 9 s, most of them importing PyTorch, making the
random inputs and creating the CUDA context, as such farmed jobs do. Limits: three --size x --size fp32 matrices on the device (0.8 GB at
8192); the check tolerates a relative error of 1e-4.

Output: one line, e.g.
  torch_matmul_cpu: device=cuda size=8192 steps=10 seconds=1.234 result=ok rel_error=1.2e-06
Exit status: 0 verified, 1 the check failed, 2 bad input or no PyTorch with CUDA (one line).
"""
import argparse
import sys
import time


def integer_from(low):
    def parse(text):
        try:
            value = int(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"'{text}' is not an integer") from None
        if value < low:
            raise argparse.ArgumentTypeError(f"{value} must be at least {low}")
        return value
    return parse


class OneLineParser(argparse.ArgumentParser):
    def error(self, message):
        self.exit(2, f"{self.prog}: error: {message}\n")


def main(argv=None):
    p = OneLineParser(prog="torch_matmul_cpu", description=__doc__.split("\n")[0])
    p.add_argument("--size", type=integer_from(1), default=8192, help="matrix order (default: %(default)s)")
    p.add_argument("--steps", type=integer_from(1), default=10, help="GPU products, each followed by CPU work "
                                                               "(default: %(default)s)")
    p.add_argument("--cpu-work", type=integer_from(0), default=6, help="sorts of a 200,000-element array per step "
                                                           "(default: %(default)s)")
    p.add_argument("--device", choices=("cuda", "cpu"), default="cuda", help="where the products run "
                                                                              "(default: %(default)s)")
    args = p.parse_args(argv)
    try:
        import numpy as np
        import torch
    except ImportError as e:
        print(f"torch_matmul_cpu: error: PyTorch with CUDA is not available here ({e})", file=sys.stderr)
        return 2
    if args.device == "cuda" and not torch.cuda.is_available():
        print("torch_matmul_cpu: error: PyTorch with CUDA is not available here (no CUDA device)", file=sys.stderr)
        return 2
    torch.backends.cuda.matmul.allow_tf32 = False
    generator = torch.Generator().manual_seed(1)
    a = torch.rand(args.size, args.size, generator=generator).to(args.device)
    b = torch.rand(args.size, args.size, generator=generator).to(args.device)
    host = np.random.default_rng(1).random(200_000)
    started = time.perf_counter()
    for _ in range(args.steps):
        c = a @ b
        if args.device == "cuda":
            torch.cuda.synchronize()
        for _ in range(args.cpu_work):
            np.sort(host)
    seconds = time.perf_counter() - started
    i, j = args.size // 3, args.size // 2
    expected = float(np.dot(a[i, :].double().cpu().numpy(), b[:, j].double().cpu().numpy()))
    error = abs(float(c[i, j]) - expected) / abs(expected)
    ok = error < 1e-4
    print(f"torch_matmul_cpu: device={args.device} size={args.size} steps={args.steps} seconds={seconds:.3f} "
          f"result={'ok' if ok else 'wrong'} rel_error={error:.2e}")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
