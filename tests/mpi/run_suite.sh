#!/usr/bin/env bash
# Runs mpsbench --device cpu on tiny sizes at NP ranks, then checks its JSON.
# usage: run_suite.sh MPIEXEC NP MPSBENCH PYTHON CHECKER WORKDIR [ARGS...]
# ARGS go to both mpsbench and the checker (e.g. --mode streams --ranks-per-gpu 1,3).
# A 0.02 s warm-up, not the default 0.2 s: the checker reads the records, not how warm the kernels were
# (the warm-up's rule has its own tests), and 0.2 s for each of the suite's 54 configurations was half
# its time with every rank busy. Inference at hidden=256 instead of its default 2048: at 2048 its 6 of the
# 54 configurations took 6 of the suite's 10 s (np 4), most of it computing and checking float64 references.
set -euo pipefail
mpiexec=$1 np=$2 mpsbench=$3 python=$4 checker=$5 workdir=$6
shift 6
here=$(cd "$(dirname "$0")" && pwd)
source "$here/mpiexec_flags.sh"
rm -rf "$workdir" && mkdir -p "$workdir"
out="$workdir/results.json"
"$mpiexec" $(mpiexec_flags "$np") -np "$np" "$mpsbench" --device cpu --size 24,40 \
  --min-time 0.01 --warmup-time 0.02 --repetitions 3 --param inference.hidden=256 --output "$out" "$@"
"$python" "$checker" "$out" --world-size "$np" --sizes 24,40 "$@"
