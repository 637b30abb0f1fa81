#!/usr/bin/env bash
# Adaptive repetitions, throttle and CPU-slowdown handling end to end: the real mpsbench
# through mpiexec on the CPU device, its JSON validated against the schema
# and checked by check_adaptive.py.
# usage: adaptive_scenarios.sh SCENARIO MPIEXEC MPSBENCH PYTHON VALIDATOR SCHEMA WORKDIR
#   SCENARIO: fixed | minimum | time | streams | throttle | cpu
#   VALIDATOR: validate_results_file, or "none" where valijson was not found
set -euo pipefail
scenario=$1 mpiexec=$2 mpsbench=$3 python=$4 validator=$5 schema=$6 workdir=$7
here=$(cd "$(dirname "$0")" && pwd)
source "$here/mpiexec_flags.sh"
rm -rf "$workdir" && mkdir -p "$workdir"

run() {  # NAME NP ARGS...: one run, its file validated and checked
  local name=$1 np=$2
  shift 2
  local out="$workdir/$name.json"
  "$mpiexec" $(mpiexec_flags "$np") -np "$np" "$mpsbench" --device cpu --output "$out" "$@" >"$workdir/$name.log"
  if [ "$validator" != none ]; then "$validator" "$schema" "$out"; fi
  "$python" "$here/check_adaptive.py" "$out" "$name"
}

small=(--kernel matmul --precision fp32 --size 24)
case $scenario in
  fixed) run fixed 2 "${small[@]}" --min-time 0.01 --repetitions 3 ;;
  # A loose target is met at once: the minimum is all that runs.
  minimum) run minimum 2 --kernel matmul,nbody --precision fp32 --size 24 --min-time 0.01 --repetitions 3 \
             --max-noise 50 ;;
  # An unreachable target: repetitions go on until the 1 s budget is spent.
  time) run time 2 "${small[@]}" --ranks-per-gpu 1,2 --min-time 0.05 --repetitions 3 --max-noise 0.0001 \
          --max-time 1 ;;
  # Threads of a --mode streams team stop together with the other ranks.
  streams) run streams 2 "${small[@]}" --mode streams --ranks-per-gpu 1,3 --min-time 0.02 --repetitions 3 \
             --max-noise 0.0001 --max-time 0.6 ;;
  # Rank 1 (not rank 0) reports every repetition of configuration 2 as
  # throttled: all ranks agree to drop two and keep the rest marked.
  throttle)
    MPSBENCH_FAULT=throttle:rank=1:config=2 run throttle-discard 2 --kernel matmul --precision fp32 --size 24,40 \
      --ranks-per-gpu 2 --min-time 0.01 --repetitions 3 --discard-throttled --throttle-retries 2
    MPSBENCH_FAULT=throttle:rank=1:config=2 run throttle-keep 2 --kernel matmul --precision fp32 --size 24,40 \
      --ranks-per-gpu 2 --min-time 0.01 --repetitions 3 ;;
  # Rank 1 reports every repetition of configuration 2 as CPU-slowed (its probe
  # twice the threshold's ratio; the high threshold keeps this machine's own
  # slowdowns out of it): dropped twice and the rest kept marked, or all kept
  # marked without --discard-cpu-slowed. Then counters that cannot be read
  # (an empty MPSBENCH_PROC_ROOT): null lists and a note, the probe still runs.
  cpu)
    MPSBENCH_FAULT=cpu_slow:rank=1:config=2 run cpu-discard 2 --kernel matmul --precision fp32 --size 24,40 \
      --ranks-per-gpu 2 --min-time 0.01 --repetitions 3 --cpu-threshold 500 --discard-cpu-slowed --cpu-retries 2
    MPSBENCH_FAULT=cpu_slow:rank=1:config=2 run cpu-keep 2 --kernel matmul --precision fp32 --size 24,40 \
      --ranks-per-gpu 2 --min-time 0.01 --repetitions 3 --cpu-threshold 500
    grep -q "size 40 ranks/gpu 2 cpu: .*, 3 reps, S3)" "$workdir/cpu-keep.log"
    mkdir -p "$workdir/no-proc"
    MPSBENCH_PROC_ROOT="$workdir/no-proc" run cpu-unreadable 1 "${small[@]}" --min-time 0.01 --repetitions 3 ;;
  *) echo "adaptive_scenarios.sh: unknown scenario '$scenario'" >&2; exit 2 ;;
esac
