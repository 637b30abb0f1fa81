#!/usr/bin/env python3
"""Start k copies of a command together, by hand, and add up the figures each copy gives of its own loop:
the direct measurement to hold `mpsbench-sweep --app-metric/--app-progress` against.

    python3 examples/together.py -k 4 --metric 'ns_per_day: ([0-9.]+)' -- python3 benchmark.py --seconds 60
    python3 examples/together.py -k 4 --progress '^([0-9]+),' -- python3 simulatePdb.py

Every copy starts at the same moment (a barrier of threads), in this shell's environment (so in MPS or not as
CUDA_MPS_PIPE_DIRECTORY says), with CUDA_VISIBLE_DEVICES as given and MPSBENCH_COPY=i. Each copy's figure:
  --metric REGEX    the first group of the last line of its stdout that REGEX matches (the program's own
                    timing of its own loop)
  --progress REGEX  its counter's increase from its own first to its own last matching line, over the time
                    between them as the lines arrived (its own loop, start-up excluded; not the common
                    window the sweep uses)
and the sum over the copies, printed as `sum: X` (with `--unit`). Python copies get PYTHONUNBUFFERED=1.
Standard library only. Exit status 1 when a copy failed or printed no match, 2 on bad input.
"""
import argparse
import os
import re
import subprocess
import sys
import threading
import time


def copy(i, command, pattern, progress, barrier, out):
    env = dict(os.environ, MPSBENCH_COPY=str(i), PYTHONUNBUFFERED="1")
    barrier.wait()
    started = time.monotonic()
    proc = subprocess.Popen(command, env=env, stdout=subprocess.PIPE, stdin=subprocess.DEVNULL)
    samples, last = [], None
    for raw in proc.stdout:
        now = time.monotonic()
        for line in raw.decode(errors="replace").splitlines():
            m = pattern.search(line)
            if m is None:
                continue
            try:
                value = float(m.group(1).replace(",", ""))
            except ValueError:
                continue
            last = value
            samples.append((now - started, value))
    code = proc.wait()
    if progress:
        figure = ((samples[-1][1] - samples[0][1]) / (samples[-1][0] - samples[0][0])
                  if len(samples) > 1 and samples[-1][0] > samples[0][0] else None)
    else:
        figure = last
    out[i] = (code, figure, samples[0][0] if samples else None, time.monotonic() - started)


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("-k", "--copies", type=int, required=True)
    how = p.add_mutually_exclusive_group(required=True)
    how.add_argument("--metric", metavar="REGEX")
    how.add_argument("--progress", metavar="REGEX")
    p.add_argument("--unit", default="units/s")
    p.add_argument("command", nargs=argparse.REMAINDER)
    args = p.parse_args()
    command = args.command[1:] if args.command[:1] == ["--"] else args.command
    if not command or args.copies < 1:
        p.error("give -k >= 1 and a command after --")
    try:
        pattern = re.compile(args.metric or args.progress)
    except re.error as e:
        p.error(f"bad pattern: {e}")
    barrier, out = threading.Barrier(args.copies), {}
    threads = [threading.Thread(target=copy, args=(i, command, pattern, args.progress is not None, barrier, out))
               for i in range(args.copies)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    ok = True
    for i in range(args.copies):
        code, figure, first, wall = out[i]
        ok = ok and code == 0 and figure is not None
        startup = f", first counter line at {first:.2f} s" if args.progress and first is not None else ""
        print(f"copy {i}: exit {code}, {figure if figure is not None else 'no figure'} {args.unit}{startup}, "
              f"{wall:.2f} s")
    total = sum(out[i][1] or 0.0 for i in range(args.copies))
    print(f"sum: {total:.6g} {args.unit} ({args.copies} copies)")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
