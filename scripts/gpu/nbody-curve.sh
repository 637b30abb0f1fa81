#!/usr/bin/env bash
# On the GPU machine: the nbody figures of issue 3 after a kernel change.
# Release build with tests, the GPU tests, the fp32 single-rank curve
# N = 4096 ... 262144 (the 45,000 GFLOP/s bar is at 262144), fp64 at two
# sizes, 8 ranks at N = 16384 (time-sliced), and the nbody micro-benchmarks
# as Google Benchmark JSON. Logs and JSON in $OUT; a table last.
set -uo pipefail
out=${OUT:-/tmp/mpsbench-out}
mkdir -p "$out"
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
mpsb=build/mpsbench
if ! { cmake -S . -B build -DCMAKE_BUILD_TYPE=Release -DCMAKE_CUDA_ARCHITECTURES=90 &&
  cmake --build build -j "$(nproc)"; } >"$out/build.log" 2>&1; then
  tail -40 "$out/build.log"; exit 1
fi
{ nvidia-smi --query-gpu=name,driver_version,compute_mode,clocks.max.sm --format=csv,noheader
  (cd build && ctest --output-on-failure -R "Gpu|Nbody|Schedule")
  echo "ctest rc=$?"; } >"$out/ctest.log" 2>&1
grep -E "^NVIDIA|tests passed|Failed|ctest rc" "$out/ctest.log"
nvidia-smi --query-gpu=clocks.sm,power.draw --format=csv,noheader,nounits -lms 250 >"$out/clocks.txt" &
smi=$!
mpirun -np 1 $mpsb --kernel nbody --precision fp32 --size 4096,8192,16384,32768,65536,131072,262144 \
  --ranks-per-gpu 1 --output "$out/nbody-curve.json" >"$out/nbody.log" 2>&1
echo "curve rc=$?"
mpirun -np 1 $mpsb --kernel nbody --precision fp64 --size 16384,65536 --ranks-per-gpu 1 \
  --output "$out/nbody-fp64.json" >>"$out/nbody.log" 2>&1
echo "fp64 rc=$?"
mpirun -np 8 $mpsb --kernel nbody --precision fp32 --size 16384 --ranks-per-gpu 8 \
  --output "$out/nbody-np8.json" >>"$out/nbody.log" 2>&1
echo "np8 rc=$?"
kill $smi
build/mpsbench-micro --benchmark_filter=nbody --benchmark_min_time=0.1 --benchmark_out="$out/micro-nbody.json" \
  --benchmark_out_format=json >>"$out/nbody.log" 2>&1
echo "micro rc=$?"
awk -F', *' '$1 > 1000 {n++; c += $1; if ($2 > w) w = $2} END {if (n) printf "SM clock under load %.0f MHz, peak %.0f W\n", c / n, w; else print "SM clock: no sample under load"}' \
  "$out/clocks.txt"
python3 scripts/gpu/results_table.py "$out"/nbody-curve.json "$out"/nbody-fp64.json "$out"/nbody-np8.json
python3 - "$out/micro-nbody.json" <<'PY'
import json, sys
for b in json.load(open(sys.argv[1]))["benchmarks"]:
    print(f'{b["name"]:40} {b.get("FLOP/s", b.get("flop_per_s", 0)) / 1e12:8.2f} TFLOP/s')
PY
