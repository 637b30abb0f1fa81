#!/usr/bin/env python3
"""Stands in for an MPI launcher in the --app-launcher tests: `fake_mpirun.py -n NP COMMAND...` starts NP
copies of COMMAND on this host, each with OMPI_COMM_WORLD_LOCAL_RANK set, and exits with the first
non-zero status (or 0)."""
import os
import subprocess
import sys


def main():
    if len(sys.argv) < 4 or sys.argv[1] != "-n":
        print("usage: fake_mpirun.py -n NP COMMAND...", file=sys.stderr)
        return 2
    np, command = int(sys.argv[2]), sys.argv[3:]
    procs = [subprocess.Popen(command, env=dict(os.environ, OMPI_COMM_WORLD_LOCAL_RANK=str(r),
                                                OMPI_COMM_WORLD_RANK=str(r))) for r in range(np)]
    codes = [p.wait() for p in procs]
    return next((c if c > 0 else 128 - c for c in codes if c != 0), 0)


if __name__ == "__main__":
    sys.exit(main())
