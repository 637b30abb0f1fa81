#!/usr/bin/env python3
"""Stands in for Open MPI's mpirun in the --app-launcher mpirun tests, with the two behaviours that decide the
ranks' environment (FAKE_MPIRUN_ARGV0: the argv[0] it was run with, which a script cannot see itself; the tests
run it through a small compiled `mpirun` that sets it):
- run by its absolute path (and without --noprefix) it acts as --prefix DIR (DIR = its directory's parent) and
  puts DIR/bin first on the ranks' PATH, as Open MPI does (so /usr/bin/mpirun puts /usr/bin first);
- FAKE_MPIRUN_REMOTE=1: the ranks run as on another node, where they get only what -x exports (plus
  PATH=/usr/bin:/bin where PATH is not exported) and Open MPI's own variables.
It starts -np N copies of the command on this host with OMPI_COMM_WORLD_LOCAL_RANK set and exits with the first
non-zero status. FAKE_MPIRUN_LOG=FILE: one line per launch, "argv0=... exported=A,B,...".
"""
import os
import subprocess
import sys

FLAGS = {"--allow-run-as-root", "--oversubscribe", "--noprefix"}
VALUED = {"-np", "-n", "-x", "--map-by", "--bind-to"}


def main():
    args = sys.argv[1:]
    if args == ["--version"]:
        print("mpirun (Open MPI) 4.1.6")
        return 0
    np, exported, noprefix = 1, [], False
    while args and (args[0] in FLAGS or args[0] in VALUED):
        flag = args.pop(0)
        if flag == "--noprefix":
            noprefix = True
        if flag in VALUED:
            value = args.pop(0)
            if flag in ("-np", "-n"):
                np = int(value)
            elif flag == "-x":
                exported.append(value)
    if not args:
        print("fake mpirun: no command", file=sys.stderr)
        return 2
    env = dict(os.environ)
    if os.environ.get("FAKE_MPIRUN_REMOTE") == "1":
        keep = ("SWEEP_TEST_TAG", "FAKE_APP_DIR", "TMPDIR")  # the tests' own bookkeeping
        env = {k: v for k, v in os.environ.items() if k in exported or k in keep}
        env.setdefault("PATH", "/usr/bin:/bin")
    argv0 = os.environ.pop("FAKE_MPIRUN_ARGV0", sys.argv[0])
    env.pop("FAKE_MPIRUN_ARGV0", None)
    if os.path.isabs(argv0) and not noprefix:
        prefix = os.path.dirname(os.path.dirname(argv0))
        env["PATH"] = os.path.join(prefix, "bin") + os.pathsep + env.get("PATH", "")
    if os.environ.get("FAKE_MPIRUN_LOG"):
        with open(os.environ["FAKE_MPIRUN_LOG"], "a") as f:
            f.write(f"argv0={argv0} exported={','.join(exported)}\n")
    procs = [subprocess.Popen(args, env=dict(env, OMPI_COMM_WORLD_LOCAL_RANK=str(r), OMPI_COMM_WORLD_RANK=str(r)))
             for r in range(np)]
    codes = [p.wait() for p in procs]
    return next((c if c > 0 else 128 - c for c in codes if c != 0), 0)


if __name__ == "__main__":
    sys.exit(main())
