#!/usr/bin/env bash
# On the GPU machine: build fp32 nbody variants (nbody_launch.hpp tunables as
# -D overrides) side by side and time each, single rank, at N = 262144 and
# 16384, sampling the SM clock while they run. Table last.
set -uo pipefail
out=${OUT:-/tmp/mpsbench-out}
mkdir -p "$out"
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
# Variants as NAME:FLAGS arguments, or the list below.
variants=("$@")
[ ${#variants[@]} -gt 0 ] || variants=(
  "default:"
  "b8:-DMPSB_NBODY_FP32_BODIES=8 -DMPSB_NBODY_FP32_MIN_BLOCKS=3"
  "b2:-DMPSB_NBODY_FP32_BODIES=2"
  "u8:-DMPSB_NBODY_FP32_UNROLL=8"
  "u32:-DMPSB_NBODY_FP32_UNROLL=32"
  "t256:-DMPSB_NBODY_FP32_THREADS=256 -DMPSB_NBODY_FP32_MIN_BLOCKS=2"
  "b8u8:-DMPSB_NBODY_FP32_BODIES=8 -DMPSB_NBODY_FP32_UNROLL=8 -DMPSB_NBODY_FP32_MIN_BLOCKS=3"
  "b6:-DMPSB_NBODY_FP32_BODIES=6 -DMPSB_NBODY_FP32_MIN_BLOCKS=3"
)
for v in "${variants[@]}"; do
  name=${v%%:*} flags=${v#*:}
  ( cmake -S . -B "build-$name" -DCMAKE_BUILD_TYPE=Release -DCMAKE_CUDA_ARCHITECTURES=90 \
      -DMPSBENCH_BUILD_TESTS=OFF -DMPSBENCH_BUILD_BENCHMARKS=OFF "-DCMAKE_CUDA_FLAGS=$flags -Xptxas=-v" &&
    cmake --build "build-$name" -j 2 --target mpsbench ) >"$out/build-$name.log" 2>&1 &
done
wait
printf '%-8s %9s %9s %9s %7s  %s\n' variant N262144 N16384 clockMHz watts ptxas
for v in "${variants[@]}"; do
  name=${v%%:*}
  [ -x "build-$name/mpsbench" ] || { echo "$name: build failed"; tail -5 "$out/build-$name.log"; continue; }
  nvidia-smi --query-gpu=clocks.sm,power.draw --format=csv,noheader,nounits -lms 250 >"$out/clk-$name.txt" &
  smi=$!
  mpirun -np 1 "build-$name/mpsbench" --kernel nbody --precision fp32 --size 262144,16384 --ranks-per-gpu 1 \
    --min-time 1 --repetitions 3 --output "$out/nbody-$name.json" >"$out/run-$name.log" 2>&1
  kill $smi
  python3 - "$out/nbody-$name.json" "$out/clk-$name.txt" "$name" "$out/build-$name.log" <<'PY'
import json, re, sys
rs = {r["size"]: r["aggregate"]["flop_per_s"]["median"] / 1e9 for r in json.load(open(sys.argv[1]))["results"]}
ok = all(r["verified"] for r in json.load(open(sys.argv[1]))["results"])
busy = [l.split(",") for l in open(sys.argv[2]) if l.strip()]
busy = [(float(c), float(w)) for c, w in busy if float(c) > 1000]
clk = sum(c for c, _ in busy) / len(busy) if busy else 0
watts = max((w for _, w in busy), default=0)
regs = sorted(set(re.findall(r"Used (\d+) registers", open(sys.argv[4]).read())), key=int)
print(f"{sys.argv[3]:8} {rs.get(262144, 0):9.0f} {rs.get(16384, 0):9.0f} {clk:9.0f} {watts:7.0f}  "
      f"regs={','.join(regs)} verified={ok}")
PY
done
