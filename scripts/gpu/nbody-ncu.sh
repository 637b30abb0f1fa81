#!/usr/bin/env bash
# On the GPU machine: where the fp32 nbody force kernel loses issue slots.
# Nsight Compute on one launch at N = 262144 (clocks left alone), the warp
# stall reasons, scheduler and pipe utilisation. Output to $OUT/ncu.txt.
set -uo pipefail
out=${OUT:-/tmp/mpsbench-out}
mkdir -p "$out"
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
{ cmake -S . -B build -DCMAKE_BUILD_TYPE=Release -DCMAKE_CUDA_ARCHITECTURES=90 -DMPSBENCH_BUILD_TESTS=OFF \
    -DMPSBENCH_BUILD_BENCHMARKS=OFF && cmake --build build -j "$(nproc)" --target mpsbench; } >"$out/build.log" 2>&1 ||
  { tail -20 "$out/build.log"; exit 1; }
ncu_bin=$(command -v ncu || ls /opt/nvidia/nsight-compute/*/ncu /usr/local/cuda/bin/ncu 2>/dev/null | head -1)
mpirun -np 1 "$ncu_bin" --clock-control none --kernel-name regex:forces_kernel --launch-skip 3 --launch-count 1 \
  --section SpeedOfLight --section ComputeWorkloadAnalysis --section SchedulerStats --section WarpStateStats \
  --section InstructionStats --section Occupancy \
  build/mpsbench --kernel nbody --precision fp32 --size 262144 --ranks-per-gpu 1 --min-time 0.05 --repetitions 1 \
  --output /tmp/ncu-run.json >"$out/ncu.txt" 2>&1
echo "ncu rc=$?"
grep -vE "^\s*$|^==PROF==" "$out/ncu.txt" | grep -E "Issue|Stall|stall|Warp Cycles|Pipe|Occupancy|Eligible|Active Warps|Executed Ipc|SM Busy|Registers|Throughput|Duration|Frequency|Issued" | head -70
