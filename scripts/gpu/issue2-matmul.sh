#!/usr/bin/env bash
# On the GPU machine: build with the default architectures, run every test
# (the GPU ones for real), the 8-rank matmul suite, and the bare cuBLAS
# yardstick; logs under $OUT, a short table last.
set -uo pipefail
out=${OUT:-/tmp/mpsbench-out}
mkdir -p "$out"
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
nvidia-smi --query-gpu=name,uuid,compute_mode,clocks.sm,clocks.max.sm,memory.total --format=csv | tee "$out/gpu.txt"
if ! { cmake -S . -B build -DCMAKE_BUILD_TYPE=Release && cmake --build build -j "$(nproc)"; } >"$out/build.log" 2>&1; then
  tail -40 "$out/build.log"; exit 1
fi
(cd build && ctest --output-on-failure -j 4) >"$out/ctest.log" 2>&1
echo "ctest rc=$?"; grep -E "tests passed|Failed|\*\*\*" "$out/ctest.log" | head -20
mpirun -np 8 build/mpsbench --kernel matmul --output "$out/matmul-np8.json" >"$out/matmul-np8.log" 2>&1
echo "mpirun -np 8 mpsbench --kernel matmul: rc=$?"
build/bare-gemm --precision fp32,tf32,bf16 --size 512,1024,2048,4096,8192 >"$out/bare-gemm.log" 2>&1
echo "bare-gemm rc=$?"
head -12 "$out/matmul-np8.log"
python3 scripts/gpu/matmul_table.py "$out/matmul-np8.json" "$out/bare-gemm.log" | tee "$out/table.txt"
