#!/usr/bin/env bash
# On the GPU machine: build mpsbench-probe and the example applications, then
# farm each with `mpsbench-sweep --app` at 1, 2, 4 and 8 copies per GPU under
# timeslice, mps and mps-qos: the small-kernels example, the PyTorch "matrix
# product, then CPU work" example, and programs this project did not write (the
# CUDA toolkit's __nvcc_device_query; PyTorch's FFT micro-benchmark). Before
# and after each sweep: no MPS process, no copy and no MPS directory may be
# left. Usage: scripts/tools/farm-apps.sh [MIN_TIME_S] [REPETITIONS] [APP...] (default 3, 3
# and every app: small-kernels torch third-party), from the repository root.
# Logs and merged results in $OUT (default /tmp/mpsbench-out): farm-NAME.json, its
# sweep's work directory farm-NAME-work/, farm.log, farm-build.log. The build goes to
# $MPSBENCH_BUILD_DIR (default build/). Results are never overwritten: a farm-NAME.json
# already in $OUT stops the script before anything runs.
set -uo pipefail
out=${OUT:-/tmp/mpsbench-out}
build=${MPSBENCH_BUILD_DIR:-build}
mkdir -p "$out"
min_time=${1:-3}
repetitions=${2:-3}
shift 2 2>/dev/null || shift $#
if [ $# -gt 0 ]; then apps=("$@"); else apps=(small-kernels torch third-party); fi
log=$out/farm.log
touch "$log"
if [ "$(id -u)" = 0 ]; then export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1; fi
if ! { cmake -S . -B "$build" -DCMAKE_BUILD_TYPE=Release -DMPSBENCH_BUILD_TESTS=OFF &&
       cmake --build "$build" -j "$(nproc)" --target mpsbench mpsbench-probe small-kernels; } >"$out/farm-build.log" 2>&1; then
  tail -40 "$out/farm-build.log"; exit 1
fi
leftovers() {  # live processes only (an unreaped MPS server zombie has exited), not this script's own line
  local live
  live=$(ps -eo stat=,args= | awk '$1 !~ /^Z/' | grep -v farm-apps.sh)
  echo "$1: MPS processes $(grep -c '[n]vidia-cuda-mps' <<<"$live"), copies $(grep -cE \
    '[s]mall-kernels|[t]orch_matmul_cpu|[n]umba.runtests' <<<"$live"), MPS directories $(ls -d /tmp/mpsb-* 2>/dev/null | wc -l), zombies $(ps -eo stat= | grep -c '^Z')" | tee -a "$log"
}
farm() {  # NAME SWEEP-ARGS...
  local name=$1 start
  shift
  leftovers "before $name"
  start=$(date +%s)
  if [ -e "$out/farm-$name.json" ] || [ -e "$out/farm-$name-work" ]; then
    echo "$name: $out/farm-$name.json or its work directory is already there: not run (results are never overwritten)" | tee -a "$log"
    return 1
  fi
  harness/mpsbench-sweep --mpsbench "$build/mpsbench" --output "$out/farm-$name.json" --ranks-per-gpu 1,2,4,8 \
    --min-time "$min_time" --repetitions "$repetitions" "$@" >>"$log" 2>&1
  echo "$name: exit status $? in $(( $(date +%s) - start )) s" | tee -a "$log"
  leftovers "after $name"
}
nvidia-smi --query-gpu=name,uuid,compute_mode,clocks.sm,clocks.max.sm --format=csv | tee -a "$log"
for app in "${apps[@]}"; do
  case $app in
    small-kernels) farm small-kernels --app "$build/small-kernels" --app-check examples/check_output.sh ;;
    torch) farm torch-matmul-cpu --app "python3 examples/torch_matmul_cpu.py" --app-check examples/check_output.sh ;;
    third-party)  # NVIDIA's own: the toolkit's device query (a CUDA context, one query); then
                  # PyTorch's FFT micro-benchmark (it fails on its own with PyTorch 2.11: how that is reported)
      query=$(dirname "$(command -v nvcc)")/__nvcc_device_query
      if [ -x "$query" ]; then
        farm nvcc-device-query --app "$query" --app-name nvcc-device-query --modes timeslice,mps,mps-qos
      else
        echo "$query is not there: NVIDIA's device query not farmed" | tee -a "$log"
      fi
      if python3 -c 'import torch.utils.benchmark.examples.spectral_ops_fuzz_test' 2>/dev/null; then
        farm pytorch-fft-bench --app "python3 -m torch.utils.benchmark.examples.spectral_ops_fuzz_test --device cuda --bench fft_real --samples 1" \
          --app-name pytorch-spectral-ops-bench --modes timeslice,mps --ranks-per-gpu 1,2
      fi ;;
    *) echo "farm-apps.sh: unknown app '$app' (small-kernels, torch, third-party)" >&2; exit 2 ;;
  esac
done
grep -E "^(kernel|app|verdict|mpsbench-sweep: .*(error|failed|FAILED))" "$log"
