#!/usr/bin/env bash
# Not part of mpsbench: the experiment behind docs/findings.md, "Taking turns" (see pair.cu).
#   run.sh modes OUTDIR   20 ms turns; two plain (time-sliced) processes, an MPS client and a plain one
#                          (both orders), and, as the control, the same processes one after the other
#   run.sh turns OUTDIR   two plain processes taking turns of 20, 100 and 250 ms
# The table goes to stdout, each process's line to OUTDIR/paired-turns-PART.log. `modes` starts an MPS
# control daemon with a private pipe and log directory and stops it on exit.
set -u
part=${1:?modes or turns} out=${2:?OUTDIR}
here=$(cd "$(dirname "$0")" && pwd)
bin=$(mktemp -d /tmp/pair-bin-XXXXXX)
nvcc -O2 -std=c++17 -arch=native "$here/pair.cu" -o "$bin/pair" -lcublas >"$out/paired-turns-build.log" 2>&1 ||
  { cat "$out/paired-turns-build.log" >&2; exit 1; }
none=$(mktemp -d /tmp/pair-no-daemon-XXXXXX)  # a pipe directory with no daemon in it: a plain context
mps=""
cleanup() {
  if [ -n "$mps" ]; then
    CUDA_MPS_PIPE_DIRECTORY=$mps/pipe CUDA_MPS_LOG_DIRECTORY=$mps/log nvidia-cuda-mps-control <<<quit >/dev/null 2>&1
    rm -rf "$mps"
  fi
  rm -rf "$bin" "$none"
}
trap cleanup EXIT
run() { local tag=$1; shift; echo "== $tag $*"; "$bin/pair" "$@" || echo "FAILED rc=$?"; }
log=$out/paired-turns-$part.log
case $part in
  modes)
    mps=$(mktemp -d /tmp/pair-mps-XXXXXX); mkdir "$mps/pipe" "$mps/log"
    CUDA_MPS_PIPE_DIRECTORY=$mps/pipe CUDA_MPS_LOG_DIRECTORY=$mps/log nvidia-cuda-mps-control -d || exit 1
    for trial in 1 2 3 4; do
      for cpu in 3 9; do
        run tsts-alt "$cpu" 50 20 512 1 "$none" "$none"
        run tsts-seq "$cpu" 25 20 512 0 "$none" "$none"
        run mpsts-alt "$cpu" 50 20 512 1 "$mps/pipe" "$none"
        run tsmps-alt "$cpu" 50 20 512 1 "$none" "$mps/pipe"
        run mpsts-seq "$cpu" 25 20 512 0 "$mps/pipe" "$none"
      done
    done >"$log" 2>&1 ;;
  turns)
    for trial in 1 2 3; do
      for cpu in 2 6 12; do
        run alt20ms "$cpu" 40 20 512 1 "$none" "$none"
        run alt100ms "$cpu" 9 100 512 1 "$none" "$none"
        run alt250ms "$cpu" 5 250 512 1 "$none" "$none"
      done
    done >"$log" 2>&1 ;;
  *) echo "run.sh: unknown part $part (modes or turns)" >&2; exit 2 ;;
esac
python3 - "$log" <<'P'
import collections, re, sys
rows, cur, got = collections.defaultdict(list), None, {}
for line in open(sys.argv[1]):
    if line.startswith("=="):
        cur, got = line.split()[1], {}
        continue
    m = re.match(r"proc (\d) mps (\d) cpu \d+: median (\d+) gemm/s", line)
    if m:
        got[int(m[1])] = (int(m[2]), float(m[3]))
        if len(got) == 2:
            rows[cur].append((got[0][1] / got[1][1], got[0], got[1]))
print("pair       A/B ratio of the median rates, sorted; mps: whether A, B were MPS clients; A's rates (GEMMs/s)")
for k, v in rows.items():
    r = sorted(x[0] for x in v)
    print(f"{k:10s} " + " ".join(f"{x:.3f}" for x in r) + f"   within 3 %: {sum(abs(x - 1) <= 0.03 for x in r)}/{len(r)}"
          f"   mps {v[0][1][0]},{v[0][2][0]}   A: " + " ".join(f"{x[1][1]:.0f}" for x in v))
P
