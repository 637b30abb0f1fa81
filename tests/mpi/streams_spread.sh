#!/usr/bin/env bash
# usage: streams_spread.sh MPIEXEC MPSBENCH OUTDIR
# --mode streams with more instance threads than the launcher's binding has CPUs (Open MPI binds one
# process to one core): the engine says once that the instances run on every CPU of the node; with a
# binding as wide as the instances (--bind-to none) it says nothing. Both runs must measure and verify.
set -uo pipefail
mpiexec=$1 mpsbench=$2 out=$3
here=$(cd "$(dirname "$0")" && pwd)
source "$here/mpiexec_flags.sh"
if [ "$(nproc)" -lt 2 ]; then echo "one CPU: nothing to spread over (skipped)"; exit 0; fi
mkdir -p "$out"
run() {  # BINDING LOG
  "$mpiexec" $(mpiexec_flags 1) --bind-to "$1" -np 1 "$mpsbench" --device cpu --mode streams --ranks-per-gpu 2 \
    --kernel stream --precision fp32 --size 65536 --min-time 0.01 --repetitions 2 --warmup-time 0.01 \
    --output "$out/$1.json" >"$out/$1.out" 2>"$out/$1.err"
}
note='instance threads and 1 CPU(s) in the launcher'"'"'s binding'
run core || { echo "--bind-to core: mpsbench failed:"; cat "$out/core.err"; exit 1; }
count=$(grep -cF "$note" "$out/core.err")
[ "$count" -eq 1 ] || { echo "--bind-to core: expected the note once, got $count:"; cat "$out/core.err"; exit 1; }
run none || { echo "--bind-to none: mpsbench failed:"; cat "$out/none.err"; exit 1; }
if grep -q "launcher's binding" "$out/none.err"; then echo "--bind-to none: unexpected note:"; cat "$out/none.err"; exit 1; fi
for b in core none; do
  grep -q '"verified": *true' "$out/$b.json" || { echo "--bind-to $b: no verified result in $out/$b.json"; exit 1; }
done
echo "ok: the note once with one CPU for two instances, none with two"
