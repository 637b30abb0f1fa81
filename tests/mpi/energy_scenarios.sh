#!/usr/bin/env bash
# Energy, GPU activity and timing records (issues 27, 28) end to end: the real
# mpsbench through mpiexec on the CPU device, its file validated against the
# schema and checked by check_energy.py.
# usage: energy_scenarios.sh SCENARIO MPIEXEC MPSBENCH PYTHON VALIDATOR SCHEMA WORKDIR
#   SCENARIO: cpu   the CPU device: energy and activity unavailable ("cpu device"), timing consistent
#             fake  a scripted NVML (MPSBENCH_FAKE_NVML) whose GPU is metered as if the ranks ran on it:
#                   250 W and known GPM figures come back through the monitor, the samples and the records,
#                   with --energy-min-span's stretch, and a mix metered as a whole
set -euo pipefail
scenario=$1 mpiexec=$2 mpsbench=$3 python=$4 validator=$5 schema=$6 workdir=$7
here=$(cd "$(dirname "$0")" && pwd)
source "$here/mpiexec_flags.sh"
rm -rf "$workdir" && mkdir -p "$workdir"

run() {  # NAME ARGS...: one run on 2 ranks, its file validated and checked
  local name=$1
  shift
  local out="$workdir/$name.json"
  "$mpiexec" $(mpiexec_flags 2) "${env_flags[@]}" -np 2 "$mpsbench" --device cpu --min-time 0.02 --repetitions 3 \
    --warmup-time 0.05 --output "$out" "$@" >"$workdir/$name.log"
  if [ "$validator" != none ]; then "$validator" "$schema" "$out"; fi
  "$python" "$here/check_energy.py" "$out" "$scenario"
}

env_flags=()
case $scenario in
  cpu) run cpu --kernel matmul,hybrid --precision fp32 --size 24,40 ;;
  fake)
    cat >"$workdir/nvml.json" <<'JSON'
{"gpus": [{"uuid": "GPU-fake-0", "power_w": 250, "tick_s": 0.05, "call_s": 0.002,
           "gpm": {"sm_active": 80, "sm_occupancy": 40, "dram_bw": 30, "tensor_active": 10}}],
 "cpu_device_as": "GPU-fake-0"}
JSON
    export MPSBENCH_FAKE_NVML="$workdir/nvml.json"
    env_flags=(-x MPSBENCH_FAKE_NVML)
    run fake --kernel matmul,inference --precision fp32,fp16 --size matmul=24,40 --size inference=2 \
      --param inference.hidden=32 --param inference.layers=2 --energy-min-span 0.5
    run fake_mix --mix matmul/fp32/32:1,nbody/fp32/64:1 --energy-min-span 0.3 ;;
  *) echo "energy_scenarios.sh: unknown scenario '$scenario'" >&2; exit 2 ;;
esac
