#!/usr/bin/env python3
"""Stands in for `srun --ntasks-per-node=1 --input=all CMD` over N nodes, on one host.

usage: fake_fanout.py N CMD...   (as --node-launcher 'python3 fake_fanout.py {nodes}')
Runs N copies of CMD. Every node has its own /tmp, so copy i > 0 of an MPS
guardian gets `--base-dir DIR.nodeI` (the same path on another node is another
directory); other commands (an application's farmers) run unchanged.
Each input line goes to every copy, their output lines are merged, SIGTERM is
passed on; exits when every copy has. FAKE_FANOUT_FAIL_NODE=i makes copy i's
daemon fail to start (FAKE_MPS_FAIL_START).
"""
import os
import signal
import subprocess
import sys
import threading


def main():
    nodes, command = int(sys.argv[1]), sys.argv[2:]
    base = command.index("--base-dir") + 1 if "--base-dir" in command else None  # an MPS guardian's
    copies = []
    for i in range(nodes):
        cmd = list(command)
        env = dict(os.environ)
        if i > 0 and base is not None:
            cmd[base] += f".node{i}"
        if os.environ.get("FAKE_FANOUT_FAIL_NODE") == str(i):
            env["FAKE_MPS_FAIL_START"] = "1"
        copies.append(subprocess.Popen(cmd, env=env, stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True))
    lock = threading.Lock()

    def pump(proc):
        for line in proc.stdout:
            with lock:
                sys.stdout.write(line)
                sys.stdout.flush()

    threads = [threading.Thread(target=pump, args=(p,)) for p in copies]
    for t in threads:
        t.start()
    signal.signal(signal.SIGTERM, lambda *a: [p.send_signal(signal.SIGTERM) for p in copies if p.poll() is None])
    for line in sys.stdin:
        for p in copies:
            try:
                p.stdin.write(line)
                p.stdin.flush()
            except (BrokenPipeError, OSError):
                pass
    for p in copies:
        try:
            p.stdin.close()
        except OSError:
            pass
    for p in copies:
        p.wait()
    for t in threads:
        t.join()
    return max(p.returncode for p in copies)


if __name__ == "__main__":
    sys.exit(main())
