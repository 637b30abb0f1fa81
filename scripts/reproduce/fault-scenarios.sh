#!/usr/bin/env bash
# The failure paths on a real GPU, once each, every one bounded by `timeout`:
#   oom      8 ranks x a size one rank can hold but 8 cannot: a real cudaMalloc
#            failure, that configuration recorded failed, the next ones run
#   kill     kill -9 of one mpsbench rank of an MPS job of the sweep command
#   sigterm  SIGTERM to the sweep command while an MPS job runs
#   daemon   kill -9 of the MPS server while an MPS job runs
#   hang     MPSBENCH_FAULT=hang on the GPU, ended by --timeout
#   resume   MPSBENCH_FAULT=abort on the GPU, then --resume
# After every scenario: no nvidia-cuda-mps-* process, no mpsbench process and
# no MPS pipe/log directory of the sweep may be left (ps, ls).
#
# Usage: scripts/reproduce/fault-scenarios.sh [BUILD_DIR [LOG]], from anywhere;
# BUILD_DIR (default build) must hold a built mpsbench. LOG (default
# faults-DATE-TIME.log in the current directory) must not exist: it gets
# everything, and the scenario table as its last paragraph (also printed).
# Each scenario's files go to a new directory beside LOG (faults-work.XXXXXX).
# Exit status: 0 every scenario PASS, 1 one failed, 2 bad usage.
# scripts/reproduce.sh runs it for the results directories whose faults.log it
# reproduces (their reproduce.txt).
set -uo pipefail
build=${1:-build}
log=${2:-faults-$(date +%Y%m%d-%H%M%S).log}
if [ ! -x "$build/mpsbench" ]; then
  echo "fault-scenarios.sh: $build/mpsbench is not there: build first (cmake --build $build)" >&2; exit 2
fi
if [ -e "$log" ] || [ -L "$log" ]; then
  echo "fault-scenarios.sh: $log is already there: not overwritten" >&2; exit 2
fi
build=$(cd "$build" && pwd)
mkdir -p "$(dirname "$log")"
: >"$log"
work=$(mktemp -d "$(cd "$(dirname "$log")" && pwd)/faults-work.XXXXXX") || exit 2
if [ "$(id -u)" = 0 ]; then export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1; fi
here=$(cd "$(dirname "$0")/../.." && pwd)
sweep=("$here/harness/mpsbench-sweep" --mpsbench "$build/mpsbench")
# This script and whatever started it (scripts/reproduce.sh, a shell) may name mpsbench in their
# command lines: they are not left-overs.
ancestors=" "
pid=$$
while [ -n "$pid" ] && [ "$pid" -gt 1 ] 2>/dev/null; do
  ancestors+="$pid "
  pid=$(awk '/^PPid:/ {print $2}' "/proc/$pid/status" 2>/dev/null)
done
table=()
note() { echo "$*" | tee -a "$log"; }
leftovers() {  # what a scenario must not leave behind (zombies are dead: listed, not counted)
  local procs dirs
  for _ in $(seq 15); do  # ranks killed by MPI_Abort may take a moment to exit
    procs=$(ps -eo pid=,stat=,comm=,args= | awk -v skip="$ancestors" '$2 !~ /^Z/ && index(skip, " " $1 " ") == 0' |
            grep -E '[n]vidia-cuda-mps|[m]psbench' | grep -v fault-scenarios)
    # MPS pipe/log dirs and the sweep's empty dirs; pipe dirs fall back to /tmp under a long $TMPDIR
    dirs=$(ls -d "${TMPDIR:-/tmp}"/mpsb-* /tmp/mpsb-* 2>/dev/null | sort -u)
    [ -z "$procs" ] && [ -z "$dirs" ] && break
    sleep 1
  done
  { echo "ps (nvidia-cuda-mps*, mpsbench; zombies: $(ps -eo stat,comm | grep -c '^Z.*mpsbench')):"; echo "${procs:-  none}"
    echo "MPS dirs: ${dirs:-none}"; } >>"$log"
  if [ -z "$procs" ] && [ -z "$dirs" ]; then echo clean; else
    echo "LEFT: $(echo "$procs" | awk '{print $3}' | sort | uniq -c | xargs) ${dirs}"; fi
}
wait_results() {  # part-file min-results seconds: until the job has finished that many configurations
  for _ in $(seq "$3"); do
    python3 -c 'import json,sys; sys.exit(len(json.load(open(sys.argv[1]))["results"]) < int(sys.argv[2]))' "$1" "$2" \
      2>/dev/null && return 0
    sleep 1
  done
  return 1
}
record() {  # scenario expected_rc rc seconds verdict what
  table+=("$(printf '%-8s %-9s %-4s %5ss  %-5s %s' "$1" "$2" "$3" "$4" "$5" "$6")")
}
check_json() {  # file python-expression over doc -> prints the summary or fails
  python3 - "$@" <<'PY'
import json, sys
doc = json.load(open(sys.argv[1]))
rs = doc["results"]
desc = ", ".join(f'{r["size"]}x{r["ranks_per_gpu"]}:{r["mode"]}:{r["status"]}' for r in rs)
ok = eval(sys.argv[2], {"doc": doc, "rs": rs})
print(("ok" if ok else "BAD") + f" complete={doc['complete']} [{desc}]")
sys.exit(0 if ok else 1)
PY
}

note "== before: $(nvidia-smi --query-gpu=name,memory.used,memory.total,compute_mode --format=csv,noheader); $(leftovers)"

# --- oom: fp32 matmul keeps 3 N^2 floats per rank on the GPU (2 N^2 on the
# host): N is chosen so one rank uses 1/7.6 of the GPU's memory: 7 ranks fit,
# 8 do not (about 31000 on an 80 GB H100, 41000 on an H200), and the 8 ranks'
# host inputs need 0.7 x the GPU's memory, which must be available on the host.
read -r oom_n host_ok < <(python3 - "$(nvidia-smi --query-gpu=memory.total --format=csv,noheader,nounits | head -1)" <<'PY'
import math, sys
gpu = float(sys.argv[1]) * 2**20
n = int(math.sqrt(gpu / 7.6 / 12))
avail = next(int(l.split()[1]) * 1024 for l in open("/proc/meminfo") if l.startswith("MemAvailable:"))
print(n, int(8 * 8 * n * n < 0.9 * avail))
PY
)
[ "$host_ok" = 1 ] || note "oom: N = $oom_n would need more host memory than is available; the scenario will fail"
s=$SECONDS
timeout 240 mpirun -np 8 "$build/mpsbench" --kernel matmul --precision fp32 --size "$oom_n",2048 --ranks-per-gpu 1,8 \
  --min-time 0.05 --repetitions 2 --output "$work/oom.json" >"$work/oom.out" 2>&1
rc=$?
cat "$work/oom.out" >>"$log"
j=$(check_json "$work/oom.json" '[r["status"] for r in rs] == ["ok", "failed", "ok", "ok"] and "out of memory" in rs[1]["error"] and all(r["verified"] for r in rs if r["status"] == "ok")' 2>&1)
v=$([ $rc -eq 1 ] && [[ $j == ok* ]] && echo PASS || echo FAIL)
note "oom: rc=$rc $j; failed: $(grep -o 'FAILED: .*' "$work/oom.out" | head -1); memory line: $(grep -c '  memory: ' "$work/oom.out")"
record oom 1 $rc $((SECONDS - s)) "$v" "$(leftovers); $j"

# The sweep running an 8-rank MPS job (matmul 4096, 20 long repetitions: long
# enough to be hit mid-configuration) in the background, pid in $sp; returns
# 0 two seconds after its first configuration is in the job's results file.
start_mps_sweep() {  # NAME
  mkdir -p "$work/$1"
  timeout 180 "${sweep[@]}" --modes mps --ranks-per-gpu 1,8 --output "$work/$1.json" --workdir "$work/$1/w" -- \
    --kernel matmul --precision fp32 --size 4096 --min-time 0.5 --repetitions 20 >"$work/$1/sweep.out" 2>&1 &
  sp=$!
  wait_results "$work/$1/w/part-mps.json" 1 90 && sleep 2
}

# Waits for the scenario's sweep ($sp), logs its output and judges it: sets
# rc, j (check_json's summary), left (leftovers) and v (PASS when the exit
# status, the results file and the leftovers are all as expected).
finish_sweep() {  # NAME expected_rc python-expression
  wait $sp
  rc=$?
  cat "$work/$1/sweep.out" >>"$log"
  j=$(check_json "$work/$1.json" "$3" 2>&1)
  left=$(leftovers)
  v=$([ $rc -eq "$2" ] && [ "$left" = clean ] && [[ $j == ok* ]] && echo PASS || echo FAIL)
}

# --- kill: the sweep runs an 8-rank MPS job; one rank gets SIGKILL.
s=$SECONDS
victim=""
start_mps_sweep kill && victim=$(pgrep -x mpsbench | sort -n | sed -n 4p)
note "kill: ps before the kill:"; ps -eo pid,comm,args | grep -E '[n]vidia-cuda-mps|[m]psbench' >>"$log"
[ -n "$victim" ] && kill -9 "$victim" && note "kill: SIGKILL to mpsbench pid $victim at $((SECONDS - s)) s"
finish_sweep kill 3 'not doc["complete"] and len(rs) >= 1 and all(r["status"] == "ok" and r["verified"] for r in rs)'
# The survivors' fatal lines must name the killed process (node_peers.hpp).
named=$(grep -c "(pid $victim) on this host had already exited" "$work/kill/sweep.out")
[ "$named" -gt 0 ] || v=FAIL
note "kill: rc=$rc after $((SECONDS - s)) s; $j; lines naming pid $victim: $named; $(grep -m1 -iE 'crash|killed|signal|exit' "$work/kill/sweep.out")"
record kill 3 $rc $((SECONDS - s)) "$v" "$left; $j"

# --- sigterm: SIGTERM to the sweep command while its MPS job runs.
mkdir -p "$work/term"
s=$SECONDS
timeout 180 "${sweep[@]}" --modes timeslice,mps --ranks-per-gpu 1,8 --output "$work/term.json" --workdir "$work/term/w" -- \
  --kernel matmul --precision fp32 --size 2048 --min-time 1 --repetitions 5 >"$work/term/sweep.out" 2>&1 &
sp=$!
for _ in $(seq 90); do sleep 1; pgrep -f nvidia-cuda-mps-server >/dev/null && pgrep -x mpsbench >/dev/null && break; done
sleep 4
note "sigterm: SIGTERM to the sweep (pid $sp) at $((SECONDS - s)) s; ps:"; ps -eo pid,comm,args | grep -E '[n]vidia-cuda-mps|[m]psbench' >>"$log"
kill -TERM $sp
finish_sweep term 143 'not doc["complete"] and all(r["status"] == "ok" for r in rs) and any(r["mode"] == "timeslice" for r in rs)'
record sigterm 143 $rc $((SECONDS - s)) "$v" "$left; $j"

# --- daemon: the MPS server is killed while an MPS job runs.
s=$SECONDS
start_mps_sweep daemon
server=$(pgrep -f nvidia-cuda-mps-server | head -1)
note "daemon: SIGKILL to nvidia-cuda-mps-server pid ${server:-none} at $((SECONDS - s)) s"
[ -n "$server" ] && kill -9 "$server"
finish_sweep daemon 3 'not doc["complete"] and all(r["status"] == "ok" and r["verified"] and r["mode"] == "mps" for r in rs)'
note "daemon: rc=$rc; $j; $(grep -m2 -iE 'mps|server|fatal' "$work/daemon/sweep.out" | tr '\n' ' ')"
record daemon 3 $rc $((SECONDS - s)) "$v" "$left; $j"

# --- hang: rank 1 hangs in configuration 2 on the GPU; --timeout 10 ends it.
s=$SECONDS
MPSBENCH_FAULT=hang:rank=1:config=2 timeout 120 mpirun -np 2 "$build/mpsbench" --kernel matmul --precision fp32 \
  --size 1024 --min-time 0.05 --repetitions 2 --timeout 10 --output "$work/hang.json" >"$work/hang.out" 2>&1
rc=$?
cat "$work/hang.out" >>"$log"
j=$(check_json "$work/hang.json" 'not doc["complete"] and [(r["size"], r["ranks_per_gpu"], r["status"]) for r in rs] == [(1024, 1, "ok")]' 2>&1)
v=$([ $rc -eq 3 ] && [[ $j == ok* ]] && echo PASS || echo FAIL)
note "hang: rc=$rc; $(grep -m1 'exceeded --timeout' "$work/hang.out")"
record hang 3 $rc $((SECONDS - s)) "$v" "$(leftovers); $j"

# --- resume: rank 1 aborts in configuration 4 (2048 x 2 ranks: the first in
# which rank 1 is active after 3 finished ones); --resume runs only that one.
s=$SECONDS
MPSBENCH_FAULT=abort:rank=1:config=4 timeout 120 mpirun -np 2 "$build/mpsbench" --kernel matmul --precision fp32 \
  --size 1024,2048 --min-time 0.05 --repetitions 2 --output "$work/resume.json" >"$work/resume1.out" 2>&1
rc1=$?
timeout 120 mpirun -np 2 "$build/mpsbench" --kernel matmul --precision fp32 --size 1024,2048 --min-time 0.05 \
  --repetitions 2 --resume "$work/resume.json" >"$work/resume2.out" 2>&1
rc=$?
cat "$work/resume1.out" "$work/resume2.out" >>"$log"
j=$(check_json "$work/resume.json" 'doc["complete"] and len(rs) == 4 and all(r["status"] == "ok" and r["verified"] for r in rs)' 2>&1)
ran=$(grep -c '^\[' "$work/resume2.out")
v=$([ $rc1 -ne 0 ] && [ $rc -eq 0 ] && [ "$ran" -eq 1 ] && [[ $j == ok* ]] && echo PASS || echo FAIL)
note "resume: first rc=$rc1 ($(grep -m1 'fault injection' "$work/resume1.out")), second rc=$rc, ran $ran; $(grep -m1 'resume:' "$work/resume2.out")"
record resume "!0,0" "$rc1,$rc" $((SECONDS - s)) "$v" "$(leftovers); $j"

note "== after: $(nvidia-smi --query-gpu=memory.used,compute_mode --format=csv,noheader); $(leftovers)"
{
  echo
  echo "== scenario table"
  printf '%-8s %-9s %-4s %6s  %-5s %s\n' scenario expect rc time verdict "leftovers; results file"
  printf '%s\n' "${table[@]}"
} | tee -a "$log"
echo "fault-scenarios.sh: log $log, scenario files in $work"
failed=$(printf '%s\n' "${table[@]}" | awk '$5 != "PASS"' | wc -l)
[ "$failed" -eq 0 ]
