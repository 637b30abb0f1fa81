#!/usr/bin/env python3
"""Stands in for mpsbench-probe in the sweep's --app tests (no GPU, no driver).

Lists FAKE_PROBE_GPUS (default 1) GPUs GPU-fake-0, GPU-fake-1, ..., restricted by
CUDA_VISIBLE_DEVICES (UUIDs or indices) as CUDA would. A GPU's context is an MPS
client when the fake control program (FAKE_JOB_CONTROL) answers get_server_list
on CUDA_MPS_PIPE_DIRECTORY; FAKE_PROBE_LIE=1 reports the opposite (a probe that
contradicts the mode); its SM count is 132 scaled by CUDA_MPS_ACTIVE_THREAD_PERCENTAGE.
FAKE_PROBE_SLEEP=S: take S seconds first (a slow driver).
"""
import json
import os
import socket
import subprocess
import sys
import time


def client():
    control = os.environ.get("FAKE_JOB_CONTROL")
    if not control or "CUDA_MPS_PIPE_DIRECTORY" not in os.environ:
        return False
    return subprocess.run([control], input="get_server_list\n", capture_output=True, text=True,
                          timeout=10).returncode == 0


def main():
    time.sleep(float(os.environ.get("FAKE_PROBE_SLEEP", "0")))
    uuids = [f"GPU-fake-{i}" for i in range(int(os.environ.get("FAKE_PROBE_GPUS", "1")))]
    visible = os.environ.get("CUDA_VISIBLE_DEVICES")
    if visible is not None:
        chosen = []
        for item in visible.split(","):
            item = item.strip()
            if item.isdigit() and int(item) < len(uuids):
                chosen.append(uuids[int(item)])
            elif item in uuids:
                chosen.append(item)
        uuids = chosen
    mps = client() != (os.environ.get("FAKE_PROBE_LIE") == "1")
    pct = os.environ.get("CUDA_MPS_ACTIVE_THREAD_PERCENTAGE")
    gpus = [{"index": i, "name": "Fake GPU", "uuid": u, "sm_count": 132 * int(pct) // 100 if pct and mps else 132,
             "memory_total_bytes": 80 << 30, "memory_free_bytes": 79 << 30, "compute_mode": "DEFAULT",
             "sm_clock_peak_khz": 1980000, "mps_enabled": mps,
             "mps_active_thread_percentage": int(pct) if pct else None} for i, u in enumerate(uuids)]
    print(json.dumps({"tool": "mpsbench-probe", "host": socket.gethostname(), "version": "0.1.0",
                      "git_commit": "fake", "git_dirty": False,
                      "cuda": {"driver_version": "13.0", "runtime_version": "13.0", "cublas_version": 130100},
                      "gpus": gpus, "problem": "" if gpus else "no CUDA device visible"}))
    return 0


if __name__ == "__main__":
    sys.exit(main())
