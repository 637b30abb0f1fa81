# Does an MPS client run small GEMMs slower than a plain process, with mpsbench out of the picture?
# Plain PyTorch on the GPU machine (its python3: PyTorch 2.11 cu130). Per GEMM shape: 15 repetitions of
# about 20 ms, each timed twice with CUDA events: launched one by one from Python (eager: the host is in
# the loop), and replayed from a CUDA graph of 100 GEMMs (graph: the GPU's own time per GEMM, no host).
# Prints one line per shape: LABEL PRECISION SIZE eager_us MEDIAN graph_us MEDIAN. development.txt runs
# it three times plain and three times as an MPS client, alternating, and gives the figures.
import statistics
import sys

import torch

label = sys.argv[1]
dev = torch.device("cuda")
for name, n, dtype, tf32 in (("fp32", 512, torch.float32, False), ("tf32", 512, torch.float32, True),
                             ("bf16", 1024, torch.bfloat16, False), ("fp32", 2048, torch.float32, False)):
    torch.backends.cuda.matmul.allow_tf32 = tf32
    a = torch.randn(n, n, device=dev, dtype=dtype)
    b = torch.randn(n, n, device=dev, dtype=dtype)
    c = torch.empty_like(a)
    for _ in range(200):
        torch.mm(a, b, out=c)
    start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    start.record()
    for _ in range(200):
        torch.mm(a, b, out=c)
    end.record()
    end.synchronize()
    count = max(50, int(20 / (start.elapsed_time(end) / 200)))  # GEMMs in about 20 ms
    graph, side = torch.cuda.CUDAGraph(), torch.cuda.Stream()
    with torch.cuda.stream(side):
        torch.mm(a, b, out=c)
        with torch.cuda.graph(graph, stream=side):
            for _ in range(100):
                torch.mm(a, b, out=c)
    torch.cuda.synchronize()
    replays = count // 100 + 1
    eager, replayed = [], []
    for _ in range(15):
        start.record()
        for _ in range(count):
            torch.mm(a, b, out=c)
        end.record()
        end.synchronize()
        eager.append(start.elapsed_time(end) * 1e3 / count)
        start.record()
        for _ in range(replays):
            graph.replay()
        end.record()
        end.synchronize()
        replayed.append(start.elapsed_time(end) * 1e3 / (replays * 100))
    print(f"{label} {name} {n} eager_us {statistics.median(eager):.3f} graph_us {statistics.median(replayed):.3f}",
          flush=True)
