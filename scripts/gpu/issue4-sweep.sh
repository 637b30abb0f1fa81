#!/usr/bin/env bash
# On the GPU machine: build, then the one-command comparison (mpsbench-sweep:
# timeslice, mps, mps-qos, streams x matmul/nbody/hybrid fp32 x 3 sizes x
# 1,2,4,8 ranks per GPU), a check that no MPS process or directory is left,
# then nbody fp32 variants if nbody-tuning.sh is asked for. Logs in $OUT.
set -uo pipefail
out=${OUT:-/tmp/mpsbench-out}
mkdir -p "$out"
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
if ! { cmake -S . -B build -DCMAKE_BUILD_TYPE=Release -DMPSBENCH_BUILD_TESTS=OFF &&
       cmake --build build -j "$(nproc)" --target mpsbench; } >"$out/build.log" 2>&1; then
  tail -40 "$out/build.log"; exit 1
fi
echo "before: mps processes $(pgrep -fc nvidia-cuda-mps), compute mode $(nvidia-smi --query-gpu=compute_mode --format=csv,noheader)"
start=$(date +%s)
harness/mpsbench-sweep --output "$out/sweep.json" --workdir /tmp/sweep-work -- \
  --kernel matmul,nbody,hybrid --precision fp32 \
  --size matmul=512,2048,8192 --size nbody=4096,16384,65536 --size hybrid=65536,262144,1048576 \
  --min-time 0.15 --repetitions 5 >"$out/sweep.log" 2>&1
echo "sweep rc=$? in $(( $(date +%s) - start )) s"
echo "after: mps processes $(pgrep -fc nvidia-cuda-mps); mps dirs left: $(ls -d /tmp/*mps* 2>/dev/null | wc -l)"
ps -eo pid,comm | grep -i mps
grep -E "^mpsbench-sweep|error|MPS state|verified" "$out/sweep.log" | head -20
tail -62 "$out/sweep.log"
if [ "${1:-}" = "--nbody-variants" ]; then OUT=/tmp/nbody-out bash scripts/gpu/nbody-tuning.sh; fi
