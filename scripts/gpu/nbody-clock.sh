#!/usr/bin/env bash
# On the GPU machine: the fp32 nbody force kernel at N = 262144 with the SM
# clock measured on the SMs right after every launch (nbody_clock_probe.cu),
# next to what nvidia-smi reports. Usage: nbody-clock.sh [SECONDS]. Output:
# $OUT/clock-probe.txt and $OUT/clock-smi.txt; the summary last.
set -uo pipefail
out=${OUT:-/tmp/mpsbench-out}
mkdir -p "$out"
seconds=${1:-10}
nvcc -O3 -std=c++17 -arch=sm_90 -Ikernels -o "$out/nbody_clock_probe" scripts/gpu/nbody_clock_probe.cu || exit 1
nvidia-smi --query-gpu=name,uuid,driver_version,clocks.max.sm,power.limit --format=csv,noheader
power_limit=$(nvidia-smi --query-gpu=power.limit --format=csv,noheader,nounits | head -1)
nvidia-smi --query-gpu=clocks.sm,clocks_event_reasons.active,power.draw,temperature.gpu --format=csv,noheader,nounits \
  -lms 100 >"$out/clock-smi.txt" &
smi=$!
"$out/nbody_clock_probe" "$seconds" >"$out/clock-probe.txt"
rc=$?
kill "$smi"
wait "$smi" 2>/dev/null
rm -f "$out/nbody_clock_probe"
cat "$out/clock-probe.txt"
# nvidia-smi samples taken under load (above half the board power limit): reported
# clock, event reasons, power, temperature.
awk -F', *' -v cut="${power_limit:-0}" '$3 > cut / 2 {n++; c[$1 " MHz, events " $2]++; if ($3 > w) w = $3; if ($4 > t) t = $4}
  END {if (!n) {print "nvidia-smi: no sample under load"; exit}
       for (k in c) printf "nvidia-smi under load: %s in %d of %d samples\n", k, c[k], n | "sort"; close("sort")
       printf "peak %.0f W, %d C\n", w, t}' "$out/clock-smi.txt"
exit "$rc"
