#!/usr/bin/env python3
"""A program that counts its work on a time-sliced GPU, for the short-run rule of --app-progress.

Copy I (MPSBENCH_COPY) starts I x --stagger seconds late (start-up that differs between copies), then does
--work units at --rate units per second shared by the copies counting at that moment (a copy alone gets all
of it, two get half each: time slicing), printing "N,progress" every --every seconds and at its end. The copies
see each other through files in $FAKE_APP_DIR/counting/ (one per copy while it counts)."""
import argparse
import os
import sys
import time


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--stagger", type=float, default=0.5)
    p.add_argument("--work", type=float, default=100.0)
    p.add_argument("--rate", type=float, default=100.0)
    p.add_argument("--every", type=float, default=0.05)
    args = p.parse_args()
    copy = os.environ.get("MPSBENCH_COPY", "0")
    board = os.path.join(os.environ["FAKE_APP_DIR"], "counting")
    os.makedirs(board, exist_ok=True)
    time.sleep(args.stagger * int(copy))
    mine = os.path.join(board, copy)
    open(mine, "w").close()
    done, last, printed = 0.0, time.monotonic(), 0.0
    print(f"{done:.3f},progress", flush=True)
    try:
        while done < args.work:
            time.sleep(0.005)
            now = time.monotonic()
            sharing = max(1, len(os.listdir(board)))
            done = min(args.work, done + args.rate / sharing * (now - last))
            last = now
            if now - printed >= args.every or done >= args.work:
                print(f"{done:.3f},progress", flush=True)
                printed = now
    finally:
        os.unlink(mine)
    return 0


if __name__ == "__main__":
    sys.exit(main())
