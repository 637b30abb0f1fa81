#!/usr/bin/env bash
# On the GPU machine: build, every test, the nbody curve and 8-rank point, the
# hybrid kernel at both CPU/GPU balances, the micro-benchmark JSON, and a
# first MPS-vs-timeslice look (private daemon, always stopped). Logs in $OUT.
set -uo pipefail
out=${OUT:-/tmp/mpsbench-out}
mkdir -p "$out"
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
mpsb=build/mpsbench
if ! { cmake -S . -B build -DCMAKE_BUILD_TYPE=Release && cmake --build build -j "$(nproc)"; } >"$out/build.log" 2>&1; then
  tail -40 "$out/build.log"; exit 1
fi
(cd build && ctest --output-on-failure -j 4) >"$out/ctest.log" 2>&1
echo "ctest rc=$?"; grep -E "tests passed|Failed|\*\*\*" "$out/ctest.log" | head -20
clocks() { nvidia-smi --query-gpu=clocks.sm,clocks.max.sm,power.draw,temperature.gpu --format=csv,noheader; }
echo "clocks before nbody: $(clocks)"
mpirun -np 1 $mpsb --kernel nbody --precision fp32 --size 4096,8192,16384,32768,65536,131072,262144 \
  --ranks-per-gpu 1 --output "$out/nbody-curve.json" >"$out/nbody-curve.log" 2>&1 &
sleep 25; echo "clocks during nbody: $(clocks)"; wait; echo "nbody curve rc=$?"
mpirun -np 8 $mpsb --kernel nbody --precision fp32 --size 16384 --output "$out/nbody-np8.json" >"$out/nbody-np8.log" 2>&1
echo "nbody np8 rc=$?"
mpirun -np 8 $mpsb --kernel hybrid --output "$out/hybrid-np8.json" >"$out/hybrid-np8.log" 2>&1
echo "hybrid np8 rc=$?"
build/mpsbench-micro --benchmark_min_time=0.1 --benchmark_out="$out/micro-gpu.json" --benchmark_out_format=json \
  >"$out/micro-gpu.log" 2>&1
echo "micro rc=$?"
# MPS: a rank that cannot reach a daemon must be refused under --mode mps.
empty=$(mktemp -d)
CUDA_MPS_PIPE_DIRECTORY=$empty mpirun -np 2 -x CUDA_MPS_PIPE_DIRECTORY $mpsb --mode mps --kernel nbody --size 4096 \
  --output "$out/refused.json" >"$out/refused.log" 2>&1
echo "mode mps without daemon: rc=$? $(grep '^mpsbench:' "$out/refused.log")"
pipe=$(mktemp -d) logs=$(mktemp -d)
export CUDA_MPS_LOG_DIRECTORY=$logs
CUDA_MPS_PIPE_DIRECTORY=$pipe nvidia-cuda-mps-control -d && echo "daemon started"
preview=(--kernel nbody,matmul --precision fp32 --size nbody=16384 --size matmul=512,2048 --ranks-per-gpu 1,8)
CUDA_MPS_PIPE_DIRECTORY=$pipe mpirun -np 8 -x CUDA_MPS_PIPE_DIRECTORY -x CUDA_MPS_LOG_DIRECTORY $mpsb --mode mps \
  "${preview[@]}" --output "$out/preview-mps.json" >"$out/preview-mps.log" 2>&1
echo "mps preview rc=$?"
echo quit | CUDA_MPS_PIPE_DIRECTORY=$pipe nvidia-cuda-mps-control; sleep 2
echo "mps processes left: $(pgrep -fc nvidia-cuda-mps)"; rm -rf "$pipe" "$logs"
CUDA_MPS_PIPE_DIRECTORY=$empty mpirun -np 8 -x CUDA_MPS_PIPE_DIRECTORY $mpsb --mode timeslice "${preview[@]}" \
  --output "$out/preview-timeslice.json" >"$out/preview-timeslice.log" 2>&1
echo "timeslice preview rc=$?"
python3 scripts/gpu/results_table.py "$out"/nbody-curve.json "$out"/nbody-np8.json
python3 scripts/gpu/results_table.py --details "$out"/hybrid-np8.json
python3 scripts/gpu/results_table.py "$out"/preview-timeslice.json "$out"/preview-mps.json
