#!/usr/bin/env bash
# End-to-end failure paths of mpsbench at 2 ranks on the CPU device, driven by
# MPSBENCH_FAULT (README "Testing"). usage:
#   fault_scenarios.sh SCENARIO MPIEXEC MPSBENCH PYTHON WORKDIR
# SCENARIO: crash | oom | hang | resume | refuse | kill
# The plan is matmul fp32 at sizes 16, 24, 40 x 1, 2 ranks: configurations
# 1..6 = 16:1 16:2 24:1 24:2 40:1 40:2 (rank 1 is active in the even ones).
set -uo pipefail
scenario=$1 mpiexec=$2 mpsbench=$3 python=$4 workdir=$5
here=$(cd "$(dirname "$0")" && pwd)
source "$here/mpiexec_flags.sh"
rm -rf "$workdir" && mkdir -p "$workdir" && cd "$workdir" || exit 1
plan=16:1,16:2,24:1,24:2,40:1,40:2
args=(--device cpu --kernel matmul --precision fp32 --size 16,24,40 --min-time 0.01 --repetitions 3)
check() { "$python" "$here/check_partial.py" "$@" --plan "$plan" || exit 1; }
die() { echo "FAIL: $*"; for f in out err; do [ -f "$f" ] && { echo "--- $f"; cat "$f"; }; done; exit 1; }
# run ARGS...: mpsbench at 2 ranks, stdout in out, stderr in err.
run() { "$mpiexec" $(mpiexec_flags 2) -np 2 "$mpsbench" "${args[@]}" "$@" >out 2>err; }

crash() {  # rank 1 crashes in configuration 4: the job ends, 1..3 stay valid
  MPSBENCH_FAULT=abort:rank=1:config=4 run --output r.json
  status=$?
  [ "$status" -ne 0 ] || die "crash: exit 0"
  grep -q '^mpsbench: fault injection: rank 1 on host .* aborts in configuration 4$' err || die "crash: no rank line"
  check r.json --expect 16:1,16:2,24:1 --complete false
  echo "ok: crash: exit $status"
}

case "$scenario" in
  crash) crash ;;
  oom)
    MPSBENCH_FAULT=oom:rank=0:config=2 run --output r.json
    status=$?
    [ "$status" -eq 1 ] || die "oom: expected exit 1, got $status"
    grep -q '^\[ 2/6\] .*FAILED: rank 0 on host .*cudaMalloc failed: out of memory' out || die "oom: no FAILED line"
    check r.json --expect "$plan" --complete true --failed 16:2 \
      --error-pattern "cudaMalloc failed: out of memory [cudaErrorMemoryAllocation]"
    grep -q '"error": "rank 0 on host ' r.json || die "oom: the error does not name rank 0 and its host"
    echo "ok: oom: exit 1" ;;
  hang)
    start=$SECONDS
    MPSBENCH_FAULT=hang:rank=1:config=2 run --output r.json --timeout 5
    status=$?
    [ "$status" -eq 3 ] || die "hang: expected exit 3, got $status"
    grep -q '^mpsbench: fatal: rank [01] on host .*: configuration 2 (matmul fp32 size 16, 2 ranks/gpu) exceeded --timeout 5 s$' err ||
      die "hang: no timeout line"
    check r.json --expect 16:1 --complete false
    echo "ok: hang: exit 3 after $((SECONDS - start)) s" ;;
  resume)
    crash
    run --resume r.json
    status=$?
    [ "$status" -eq 0 ] || die "resume: exit $status"
    grep -q 'resume: 3 of 6 configurations kept from r.json' out || die "resume: no resume line"
    [ "$(grep -c '^\[' out)" -eq 3 ] || die "resume: expected 3 configurations run"
    check r.json --expect "$plan" --complete true
    # The 2-rank result of a resumed 1-rank configuration still has its speedup.
    "$python" -c 'import json,sys; r=json.load(open("r.json"))["results"][3]; sys.exit(r["speedup_vs_one_rank_per_gpu"] is None)' ||
      die "resume: configuration 4 has no speedup"
    echo "ok: resume" ;;
  refuse)
    crash
    cp r.json before.json
    "$python" -c 'import json; d=json.load(open("r.json")); d["schema_version"]=99; json.dump(d, open("v.json","w"))'
    for case in "v.json:schema_version" "r.json:configuration set"; do
      file=${case%%:*} pattern=${case#*:}
      extra=(); [ "$file" = r.json ] && extra=(--size 16,24)
      "$mpiexec" $(mpiexec_flags 2) -np 2 "$mpsbench" "${args[@]}" "${extra[@]}" --resume "$file" >out 2>err
      status=$?
      [ "$status" -eq 2 ] || die "refuse $file: expected exit 2, got $status"
      [ "$(grep -c '^mpsbench:' err)" -eq 1 ] && grep -q "^mpsbench: error: --resume: .*$pattern" err ||
        die "refuse $file: expected one '--resume: ... $pattern' line"
    done
    cmp -s r.json before.json || die "refuse: the refused run changed the file"
    echo "ok: refuse" ;;
  kill)  # SIGKILL at random points: the file is absent or whole, never torn
    RANDOM=7
    for round in 1 2 3 4 5 6; do
      rm -f k.json
      setsid "$mpiexec" $(mpiexec_flags 2) -np 2 "$mpsbench" "${args[@]}" --min-time 0.15 --output k.json \
        >out 2>err &
      pid=$!
      sleep "$((RANDOM % 4)).$((RANDOM % 10))"
      children=$(pgrep -P "$pid")
      kill -KILL -- "-$pid" 2>/dev/null
      for child in $children; do kill -KILL "$child" 2>/dev/null; done
      wait "$pid"
      check k.json --prefix-or-absent
      echo "round $round: killed"
    done
    echo "ok: kill" ;;
  *) echo "unknown scenario $scenario"; exit 2 ;;
esac
