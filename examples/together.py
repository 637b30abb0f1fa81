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
and the sum over the copies, printed as `sum: X` (with `--unit`). With --progress it also says how much the
copies' loops overlapped (the share of each copy's loop during which every other copy was in its loop too)
and the sum inside the common window (every copy past its first counter line, none past its last, as the
sweep takes it): where start-up times differ by a good part of the loop, a copy that ran part of its loop
alone makes the sum of own-loop rates larger than what the copies get together. Python copies get
PYTHONUNBUFFERED=1. Standard library only. Exit status 1 when a copy failed or printed no match, 2 on bad
input.
"""
import argparse
import math
import os
import re
import subprocess
import sys
import threading
import time

barrier_time = []  # when the copies were let go


def copy(i, command, pattern, progress, barrier, out):
    env = dict(os.environ, MPSBENCH_COPY=str(i), PYTHONUNBUFFERED="1")
    barrier.wait()
    started = time.monotonic()
    proc = subprocess.Popen(command, env=env, stdout=subprocess.PIPE, stdin=subprocess.DEVNULL)
    samples, values, bad, pending = [], [], [], b""

    def take(text, now):
        for line in text.decode(errors="replace").splitlines():
            m = pattern.search(line)
            if m is None:
                continue
            try:
                value = float(m.group(1).replace(",", ""))
            except ValueError:
                continue
            # A rate is finite and above 0, a counter finite and not below 0: anything else is no figure
            # (a sum with it would be as wrong as the sweep refuses to be).
            if not math.isfinite(value) or value < 0 or (value == 0 and not progress):
                bad.append(m.group(1))
                continue
            values.append(value)
            samples.append((now - started, value))

    # What has arrived, not up to a newline: a progress bar redraws its line after a carriage return.
    for chunk in iter(lambda: proc.stdout.read1(1 << 16), b""):
        pending += chunk
        cut = max(pending.rfind(b"\n"), pending.rfind(b"\r"))
        if cut >= 0:
            take(pending[:cut + 1], time.monotonic())
            pending = pending[cut + 1:]
    take(pending, time.monotonic())  # the last line, without a newline
    last = values[-1] if values else None
    code = proc.wait()
    if progress:
        figure = ((samples[-1][1] - samples[0][1]) / (samples[-1][0] - samples[0][0])
                  if len(samples) > 1 and samples[-1][0] > samples[0][0] else None)
    else:
        figure = last
    if bad:
        figure = None
    # Times since the common start (every copy's clock starts at the barrier, within microseconds).
    out[i] = (code, figure, samples[0][0] if samples else None, time.monotonic() - started,
              [(started - barrier_time[0] + t, v) for t, v in samples], bad)


def counter_at(samples, t):
    for (t0, v0), (t1, v1) in zip(samples, samples[1:]):
        if t0 <= t <= t1:
            return v0 if t1 == t0 else v0 + (v1 - v0) * (t - t0) / (t1 - t0)
    return samples[-1][1] if t >= samples[-1][0] else samples[0][1]


def overlap_report(out, unit):
    """Lines on how the copies' loops overlapped, and the sum inside their common window."""
    loops = [s for _, _, _, _, s, _ in out.values() if len(s) > 1]
    if len(loops) != len(out) or len(loops) < 2:
        return []
    begin, end = max(s[0][0] for s in loops), min(s[-1][0] for s in loops)
    shares = [max(0.0, end - begin) / (s[-1][0] - s[0][0]) for s in loops]
    lines = [f"loops overlapped: {min(shares) * 100:.0f}% to {max(shares) * 100:.0f}% of each copy's loop"]
    if end > begin:
        total = sum((counter_at(s, end) - counter_at(s, begin)) / (end - begin) for s in loops)
        lines.append(f"sum in the common window ({end - begin:.2f} s): {total:.6g} {unit}")
    return lines


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
    barrier, out = threading.Barrier(args.copies, action=lambda: barrier_time.append(time.monotonic())), {}
    threads = [threading.Thread(target=copy, args=(i, command, pattern, args.progress is not None, barrier, out))
               for i in range(args.copies)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    ok = True
    for i in range(args.copies):
        code, figure, first, wall, _, bad = out[i]
        ok = ok and code == 0 and figure is not None
        startup = f", first counter line at {first:.2f} s" if args.progress and first is not None else ""
        wanted = "a finite counter of 0 or more" if args.progress else "a finite rate above 0"
        why = f" (it printed {bad[0]!r}: not {wanted})" if bad else ""
        print(f"copy {i}: exit {code}, {figure if figure is not None else 'no figure'} {args.unit}{startup}, "
              f"{wall:.2f} s{why}")
    total = sum(out[i][1] or 0.0 for i in range(args.copies))
    for line in overlap_report(out, args.unit) if args.progress else []:
        print(line)
    print(f"sum: {total:.6g} {args.unit} ({args.copies} copies)")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
