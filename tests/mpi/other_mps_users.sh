#!/usr/bin/env bash
# usage: other_mps_users.sh SCENARIO MPIEXEC MPSBENCH PYTHON VALIDATOR SCHEMA WORKDIR
# --other-mps-users end to end on the CPU device (--device auto falls back to
# it here; the check runs before any GPU work either way), against a fake
# /proc tree (MPSBENCH_PROC_ROOT):
#   refuse  another user's MPS server: exit 2, one "mpsbench: error:" line
#   go_on   the same with --other-mps-users go-on: exit 0, one warning line,
#           the process recorded in context.other_mps_processes
#   own     only our own daemon and server: nothing said, an empty list
#   cpu     --device cpu: not looked for (null), nothing said
set -uo pipefail
scenario=$1 mpiexec=$2 mpsbench=$3 python=$4 validator=$5 schema=$6 work=$7
here=$(cd "$(dirname "$0")" && pwd)
source "$here/mpiexec_flags.sh"
rm -rf "$work" && mkdir -p "$work"
proc="$work/proc"
me=$(id -u)
other=$((me + 4000000))

# add_process PID NAME UID ARGV0: /proc/PID/status and cmdline as the kernel shows them.
add_process() {
  mkdir -p "$proc/$1"
  printf 'Name:\t%s\nState:\tS (sleeping)\nPid:\t%s\nUid:\t%s\t%s\t%s\t%s\n' "$2" "$1" "$3" "$3" "$3" "$3" \
    > "$proc/$1/status"
  printf '%s\0-d\0' "$4" > "$proc/$1/cmdline"
}
add_process 1 systemd 0 /sbin/init
add_process 420 nvidia-cuda-mps "$me" nvidia-cuda-mps-control
add_process 421 nvidia-cuda-mps "$me" nvidia-cuda-mps-server
if [ "$scenario" != own ]; then add_process 1207 nvidia-cuda-mps "$other" nvidia-cuda-mps-server; fi

out="$work/results.json"
args=(--kernel matmul --precision fp32 --size 8 --ranks-per-gpu 1 --min-time 0.01 --repetitions 1
      --warmup-time 0 --output "$out")
case $scenario in
  refuse) expected=2 ;;
  go_on) expected=0; args+=(--other-mps-users go-on) ;;
  own) expected=0 ;;
  cpu) expected=0; args+=(--device cpu) ;;
  *) echo "unknown scenario $scenario"; exit 1 ;;
esac

MPSBENCH_PROC_ROOT="$proc" "$mpiexec" $(mpiexec_flags 2) -np 2 "$mpsbench" "${args[@]}" \
  >"$work/stdout" 2>"$work/stderr"
status=$?
lines=$(grep '^mpsbench:' "$work/stderr")
count=$(printf '%s' "$lines" | grep -c .)
fail() { echo "FAIL ($scenario): $*"; echo "--- stderr"; cat "$work/stderr"; exit 1; }
[ "$status" -eq "$expected" ] || fail "exit $status, expected $expected"

case $scenario in
  refuse)
    [ "$count" -eq 1 ] || fail "expected one mpsbench line, got $count"
    grep -qF "mpsbench: error: another user's MPS server is running (nvidia-cuda-mps-server pid 1207 uid $other on " \
      <<<"$lines" || fail "no refusal naming the server"
    grep -qF "silently serialising the two users' jobs" <<<"$lines" || fail "the line does not say what it does"
    [ ! -e "$out" ] || fail "a results file was written"
    ;;
  go_on)
    [ "$count" -eq 1 ] || fail "expected one mpsbench line, got $count"
    grep -qF "mpsbench: warning: another user's MPS server is running" <<<"$lines" || fail "no warning"
    grep -qF "(--other-mps-users go-on: measuring anyway)" <<<"$lines" || fail "the warning does not say go-on"
    ;;
  own|cpu)
    [ "$count" -eq 0 ] || fail "expected no mpsbench line, got $count"
    ;;
esac

if [ "$scenario" != refuse ]; then
  if [ "$validator" != none ]; then "$validator" "$schema" "$out" || fail "results file invalid"; fi
  "$python" - "$out" "$scenario" "$other" <<'EOF' || fail "context.other_mps_processes"
import json, sys
doc = json.load(open(sys.argv[1]))
found = doc["context"]["other_mps_processes"]
scenario, other = sys.argv[2], int(sys.argv[3])
if scenario == "go_on":
    assert len(found) == 1, found
    assert found[0]["pid"] == 1207 and found[0]["uid"] == other, found
    assert found[0]["process"] == "nvidia-cuda-mps-server" and found[0]["host"], found
elif scenario == "own":
    assert found == [], found
else:
    assert found is None, found
assert all(r["mps_pinned_mem_limit_bytes"] is None for r in doc["context"]["ranks"])
EOF
fi
echo "ok: $scenario"
