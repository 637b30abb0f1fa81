#!/usr/bin/env python3
"""A farmed application with a known run time and known faults, for the sweep's --app tests.

Each run sleeps --sleep seconds and appends one line to $FAKE_APP_DIR/copies.log:
"copy=I cuda_visible_devices=V local_rank=L gpu=G"; runs are counted per copy in
$FAKE_APP_DIR/copy-I.count, so a fault can hit a copy's Nth run:
  --fail-on-run N    that run prints to stderr and exits 7
  --signal-on-run N  that run kills itself with SIGKILL
  --hang-on-run N    that run sleeps for ever (only --timeout ends it)
  --fail-copy I      the faults hit copy I only (default: every copy)
  --fail-message M   what a failing run prints on stderr (default: "simulated failure")
  --background S     each run leaves a child in a session of its own (setsid) sleeping S seconds, marked
                     FAKE_APP_BACKGROUND=1; each run logs bg_alive=K, how many such children of earlier
                     runs were alive when it started
  --remove-run-dir-on-run N  that run removes the directory of its host's runs (its stdout's grandparent)
It prints "result=ok run=N" on stdout (what the --app-check example looks for). Its own figure:
  --rate R           it prints "rate: R units/s" (R may be "copy" for 10 x (copy number + 1)) before ending
  --rate-text T      ... or "rate: T units/s" (a group that is not a number)
  --pad-line N       the rate line starts with N characters "x" (a line longer than the farmer reads whole)
  --startup S        sleeps S seconds first (a slow start: imports, context, compilation)
  --sleep-per-copy S copy I sleeps I x S seconds more than --sleep (copies of different lengths)
  --count-rate R     then prints "N,progress" every --count-every seconds for --count-for seconds, N the
                     count so far at R per second (a cumulative counter, flushed line by line)
  --count-down       the counter goes down once (not cumulative)
  --count-bar        the counter as a progress bar instead: "\rN it" redrawn on one line (no newline until
                     the end), as tqdm draws it
  --figure-to-stderr the rate and the counter go to stderr (as tqdm's do), not stdout
Each run also logs cpus=LIST (its CPU affinity) and the first entry of PATH, PYTHONPATH, VIRTUAL_ENV and
FAKE_VENV_PYTHON (set by a fake virtual environment's python3 wrapper) in copies.log.
"""
import argparse
import os
import shutil
import signal
import subprocess
import sys
import time


def background_alive():
    """Children of earlier runs still alive: processes marked FAKE_APP_BACKGROUND=1 of this test."""
    mark, tag = b"FAKE_APP_BACKGROUND=1", f"SWEEP_TEST_TAG={os.environ.get('SWEEP_TEST_TAG')}".encode()
    count = 0
    for name in os.listdir("/proc"):
        try:
            with open(f"/proc/{name}/environ", "rb") as f:
                env = f.read().split(b"\0")
            with open(f"/proc/{name}/stat", "rb") as f:
                state = f.read().rsplit(b")", 1)[1].split()[0]
        except (OSError, IndexError):
            continue
        count += mark in env and tag in env and state not in (b"Z", b"X")
    return count


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--sleep", type=float, default=0.1)
    p.add_argument("--fail-on-run", type=int)
    p.add_argument("--signal-on-run", type=int)
    p.add_argument("--hang-on-run", type=int)
    p.add_argument("--fail-copy", type=int)
    p.add_argument("--fail-message", default="simulated failure")
    p.add_argument("--background", type=float)
    p.add_argument("--remove-run-dir-on-run", type=int)
    p.add_argument("--rate")
    p.add_argument("--rate-text")
    p.add_argument("--pad-line", type=int, default=0)
    p.add_argument("--startup", type=float, default=0.0)
    p.add_argument("--sleep-per-copy", type=float, default=0.0)
    p.add_argument("--count-rate", type=float)
    p.add_argument("--count-every", type=float, default=0.05)
    p.add_argument("--count-for", type=float, default=1.0)
    p.add_argument("--count-down", action="store_true")
    p.add_argument("--count-bar", action="store_true")
    p.add_argument("--figure-to-stderr", action="store_true")
    args = p.parse_args()
    directory = os.environ["FAKE_APP_DIR"]
    copy = os.environ.get("MPSBENCH_COPY", "-")
    counter = os.path.join(directory, f"copy-{copy}.{os.environ.get('MPSBENCH_LOCAL_RANK', 'x')}.count")
    try:
        with open(counter) as f:
            run = int(f.read()) + 1
    except OSError:
        run = 1
    with open(counter, "w") as f:
        f.write(str(run))
    with open(os.path.join(directory, "copies.log"), "a") as f:
        f.write(f"copy={copy} cuda_visible_devices={os.environ.get('CUDA_VISIBLE_DEVICES', '-')} "
                f"local_rank={os.environ.get('MPSBENCH_LOCAL_RANK', '-')} gpu={os.environ.get('MPSBENCH_GPU', '-')} "
                f"pipe={os.environ.get('CUDA_MPS_PIPE_DIRECTORY', '-')} run={run} "
                f"bg_alive={background_alive() if args.background else '-'} "
                f"cpus={','.join(map(str, sorted(os.sched_getaffinity(0))))} "
                f"path0={os.environ.get('PATH', '-').split(os.pathsep)[0]} "
                f"pythonpath={os.environ.get('PYTHONPATH', '-')} venv={os.environ.get('VIRTUAL_ENV', '-')} "
                f"venv_python={os.environ.get('FAKE_VENV_PYTHON', '-')}\n")
    hit = args.fail_copy is None or str(args.fail_copy) == copy
    if args.background:
        subprocess.Popen(["sleep", str(args.background)], start_new_session=True, stdout=subprocess.DEVNULL,
                         stderr=subprocess.DEVNULL, env=dict(os.environ, FAKE_APP_BACKGROUND="1"))
    if hit and run == args.remove_run_dir_on_run:
        out = os.readlink("/proc/self/fd/1")  # RUN_DIR/HOST/copy-I/rR-N.out
        shutil.rmtree(os.path.dirname(os.path.dirname(out)), ignore_errors=True)
    if hit and run == args.fail_on_run:
        print(f"fake_app: copy {copy} run {run}: {args.fail_message}", file=sys.stderr, flush=True)
        sys.exit(7)
    if hit and run == args.signal_on_run:
        os.kill(os.getpid(), signal.SIGKILL)
    if hit and run == args.hang_on_run:
        while True:
            time.sleep(60)
    time.sleep(args.startup)
    figures = sys.stderr if args.figure_to_stderr else sys.stdout
    if args.count_rate is not None:
        started, count, lines = time.monotonic(), 0.0, 0
        while time.monotonic() - started < args.count_for:
            time.sleep(args.count_every)
            count = args.count_rate * (time.monotonic() - started)
            lines += 1
            shown = count / 2 if args.count_down and lines == 3 else count
            if args.count_bar:
                print(f"\r{shown:.3f} it", end="", file=figures, flush=True)
            else:
                print(f"{shown:.3f},progress", file=figures, flush=True)
        if args.count_bar:
            print(file=figures, flush=True)
    time.sleep(args.sleep + (args.sleep_per_copy * int(copy) if copy.isdigit() else 0.0))
    if args.rate is not None:
        value = 10.0 * (int(copy) + 1) if args.rate == "copy" else float(args.rate)
        print("x" * args.pad_line + f"rate: {value} units/s", file=figures)
    if args.rate_text is not None:
        print(f"rate: {args.rate_text} units/s")
    print(f"result=ok run={run}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
