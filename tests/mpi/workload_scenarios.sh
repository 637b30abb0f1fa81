#!/usr/bin/env bash
# --allreduce, --mix and the request/memory kernels (inference, stream) end to
# end: the real mpsbench through mpiexec on the CPU device, its JSON validated
# against the schema and checked by check_workloads.py.
# usage: workload_scenarios.sh SCENARIO MPIEXEC MPSBENCH PYTHON VALIDATOR SCHEMA WORKDIR
#   SCENARIO: allreduce | mix | inference_stream
#   VALIDATOR: validate_results_file, or "none" where valijson was not found
# Exits 77 (ctest's skip) when a kernel the scenario needs is not registered.
set -euo pipefail
scenario=$1 mpiexec=$2 mpsbench=$3 python=$4 validator=$5 schema=$6 workdir=$7
here=$(cd "$(dirname "$0")" && pwd)
source "$here/mpiexec_flags.sh"
rm -rf "$workdir" && mkdir -p "$workdir"

needs_kernels() {  # KERNEL...: skip unless --list-kernels names each
  local listed
  listed=$("$mpsbench" --list-kernels)
  for k in "$@"; do
    if ! grep -q "^$k:" <<<"$listed"; then
      echo "workload_scenarios.sh: kernel '$k' is not registered in $mpsbench: skipping $scenario"
      exit 77
    fi
  done
}

run() {  # NAME NP ARGS...: one run, its file validated and checked
  local name=$1 np=$2
  shift 2
  local out="$workdir/$name.json"
  "$mpiexec" $(mpiexec_flags "$np") -np "$np" "$mpsbench" --device cpu --min-time 0.02 --repetitions 2 \
    --output "$out" "$@" >"$workdir/$name.log"
  if [ "$validator" != none ]; then "$validator" "$schema" "$out"; fi
  "$python" "$here/check_workloads.py" "$out" "$scenario"
}

case $scenario in
  # Ranks 1 and 2 of a small matmul, each iteration followed by a 64 KiB MPI_Allreduce.
  allreduce) run allreduce 2 --kernel matmul --precision fp32 --size 32 --allreduce 64K ;;
  # matmul and nbody sharing the host: each alone, each at 2 ranks, then the mix.
  mix) run mix 2 --mix matmul/fp32/64:1,nbody:1 ;;
  inference_stream)
    needs_kernels inference stream
    run inference_stream 2 --kernel inference,stream --param inference.hidden=64 --param inference.layers=2 \
      --size stream=65536 --size inference=4 ;;
  *) echo "workload_scenarios.sh: unknown scenario '$scenario'" >&2; exit 2 ;;
esac
