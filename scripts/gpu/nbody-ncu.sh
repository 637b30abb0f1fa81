#!/usr/bin/env bash
# On the GPU machine: where the fp32 nbody force kernel loses issue slots.
# Nsight Compute on one launch at N = 262144 (clocks left alone): scheduler,
# occupancy and the per-reason warp stalls (raw metrics), plus the kernel's
# SASS. Usage: nbody-ncu.sh [BUILD_DIR] (default: build `build` first).
# Output: $OUT/ncu.txt and $OUT/sass.txt.
set -uo pipefail
out=${OUT:-/tmp/mpsbench-out}
mkdir -p "$out"
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
build=${1:-}
if [ -z "$build" ]; then
  build=build
  { cmake -S . -B build -DCMAKE_BUILD_TYPE=Release -DCMAKE_CUDA_ARCHITECTURES=90 -DMPSBENCH_BUILD_TESTS=OFF \
      -DMPSBENCH_BUILD_BENCHMARKS=OFF && cmake --build build -j "$(nproc)" --target mpsbench; } >"$out/build.log" 2>&1 ||
    { tail -20 "$out/build.log"; exit 1; }
fi
cuda_bin=$(dirname "$(command -v nvcc || echo /usr/local/cuda/bin/nvcc)")
ncu_bin=$(command -v ncu || ls /opt/nvidia/nsight-compute/*/ncu "$cuda_bin/ncu" 2>/dev/null | head -1)
mpirun -np 1 "$ncu_bin" --clock-control none --kernel-name regex:forces_kernel --launch-skip 3 --launch-count 1 \
  --section SpeedOfLight --section SchedulerStats --section WarpStateStats --section Occupancy \
  --section LaunchStats --section InstructionStats --page raw \
  "$build/mpsbench" --kernel nbody --precision fp32 --size 262144 --ranks-per-gpu 1 --min-time 0.05 \
  --repetitions 1 --output /tmp/ncu-run.json >"$out/ncu.txt" 2>&1
echo "ncu rc=$?"
grep -E "issue_stalled_.*per_issue_active.ratio|warps_active.avg.per_cycle_active|issue_active.avg.per_cycle_active|launch__(grid|block|occupancy_limit|registers|waves)|sm__cycles_active.avg |gpc__cycles_elapsed.max|smsp__inst_executed.sum " \
  "$out/ncu.txt" | awk '$NF != "0" && $NF != "0.00"' | head -60
# The SASS of the first fp32 shape (the one large N runs), for instruction counts
# and the register-bank model; its mangled name from nbody_launch.hpp's defaults.
shape() { sed -n "s/^#define MPSB_NBODY_FP32_$1 \([0-9]*\)$/\1/p" kernels/nbody_launch.hpp; }
kernel="forces_kernelIfLi$(shape THREADS)ELi$(shape BODIES)ELi$(shape UNROLL)ELi$(shape MIN_BLOCKS)E"
"$cuda_bin/cuobjdump" -sass "$build/mpsbench" 2>/dev/null |
  awk -v k="$kernel" '/Function :/ {p = index($0, k) > 0} p' >"$out/sass.txt"
python3 scripts/gpu/sass_banks.py "$out/sass.txt" | head -6
echo "sass lines: $(wc -l <"$out/sass.txt"); per-opcode counts in the function:"
grep -oE '^\s+/\*[0-9a-f]+\*/\s+[A-Z][A-Z0-9.]*' "$out/sass.txt" | awk '{print $2}' | sed 's/\..*//' | sort | uniq -c | sort -rn | head -14
