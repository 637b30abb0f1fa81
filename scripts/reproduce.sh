#!/usr/bin/env bash
# Re-runs the published tables of one results directory on this GPU machine and prints each
# next to the published one.
#
#   scripts/reproduce.sh [options] DEVICE-DIR [OUTDIR]
#
# DEVICE-DIR: a directory of results/ (results/h100-2026-11-24, or just h100-2026-11-24) with a
# reproduce.txt: one command per line, `NAME FILES COMMAND` (the format is in that file's header
# and in results/README.md). Steps:
#   1. OUTDIR (default: reproduce-DIR-DATE-TIME in the current directory) is created; it must not
#      exist or be empty: nothing already there is overwritten.
#   2. A Release build (cmake, tests off) into $MPSBENCH_BUILD_DIR (default build-reproduce/ in the
#      repository), logged to OUTDIR/logs/build.log.
#   3. Each command, in file order, from the repository root, by bash with BUILD (the build
#      directory), OUT (OUTDIR) and MPSBENCH_BUILD_DIR set; its console to OUTDIR/logs/NAME.log.
#      A failing command does not stop the others.
#   4. After each command, every file it wrote is printed next to the published one
#      (scripts/reproduce/compare_published.py), also collected in OUTDIR/comparison.txt; a
#      summary (name, exit status, seconds) ends the run and goes to OUTDIR/summary.txt.
# OUTDIR also gets the reproduce.txt used and machine.txt (GPU, driver, commit, date).
#
# Options:
#   --list          print the directory's commands and run nothing
#   --only NAMES    run only these commands (comma list of names)
#   --no-build      use the build directory as it is (it must hold mpsbench)
#   --dry-run       print what would run; create, build and run nothing
#
# Exit status: 0 every command exited 0 and wrote its files; 1 one did not (or the build
# failed); 2 bad input (no such directory, a malformed reproduce.txt, OUTDIR not empty, no GPU);
# 130/143 interrupted (the running command's processes are stopped first).
# MPSBENCH_REPRODUCE_SKIP_GPU_CHECK=1 runs without an NVIDIA GPU (the tests use it).
set -uo pipefail

repo=$(cd "$(dirname "$0")/.." && pwd)
prog=scripts/reproduce.sh
say() { printf 'reproduce: %s\n' "$*"; }
die() { printf 'reproduce: error: %s\n' "$*" >&2; exit 2; }
usage() {
  echo "usage: $prog [--list] [--only NAMES] [--no-build] [--dry-run] DEVICE-DIR [OUTDIR]" >&2
  echo "  DEVICE-DIR: a results directory with a reproduce.txt (e.g. results/h100-2026-11-24)" >&2
  exit 2
}

list="" only="" build_it=1 dry="" args=()
while [ $# -gt 0 ]; do
  case $1 in
    -h|--help) sed -n '2,/^set -uo/p' "$0" | sed '$d; s/^# \{0,1\}//'; exit 0 ;;
    --list) list=1; shift ;;
    --only) [ $# -ge 2 ] || usage; only=$2; shift 2 ;;
    --only=*) only=${1#*=}; shift ;;
    --no-build) build_it=""; shift ;;
    --dry-run) dry=1; shift ;;
    --) shift; args+=("$@"); break ;;
    -*) echo "$prog: unknown option $1" >&2; usage ;;
    *) args+=("$1"); shift ;;
  esac
done
if [ ${#args[@]} -lt 1 ] || [ ${#args[@]} -gt 2 ]; then usage; fi

# --- the results directory and its reproduce.txt --------------------------------------------------
devdir=${args[0]}
if [ ! -d "$devdir" ] && [ -d "$repo/results/$devdir" ]; then devdir=$repo/results/$devdir; fi
if [ ! -d "$devdir" ]; then
  known=("$repo"/results/*/reproduce.txt)
  known=("${known[@]%/reproduce.txt}")
  die "$devdir: no such directory (results directories: ${known[*]##*/})"
fi
devdir=$(cd "$devdir" && pwd)
spec=$devdir/reproduce.txt
[ -f "$spec" ] || die "$devdir has no reproduce.txt: nothing to reproduce"

names=() files=() commands=()
lineno=0
while IFS= read -r line || [ -n "$line" ]; do
  lineno=$((lineno + 1))
  line=${line#"${line%%[![:space:]]*}"}
  case $line in ''|'#'*) continue ;; esac
  read -r name fileset cmd <<<"$line"
  [ -n "${cmd:-}" ] || die "$spec:$lineno: want NAME FILES COMMAND"
  [[ $name =~ ^[A-Za-z0-9][A-Za-z0-9._-]*$ ]] || die "$spec:$lineno: name '$name': letters, digits, . _ - only"
  for n in "${names[@]}"; do [ "$n" != "$name" ] || die "$spec:$lineno: name '$name' used twice"; done
  IFS=, read -r -a items <<<"$fileset"
  for item in "${items[@]}"; do
    out=${item%%=*}
    case /$out/ in
      *//*|*/../*|*/./*) die "$spec:$lineno: '$out': a path inside the output directory, without . or .." ;;
    esac
    for f in "${files[@]}"; do
      case ",$f," in *",$out,"*|*",$out="*) die "$spec:$lineno: $out is written by an earlier line too" ;; esac
    done
  done
  names+=("$name") files+=("$fileset") commands+=("$cmd")
done <"$spec"
[ ${#names[@]} -gt 0 ] || die "$spec: no commands"

selected=()
if [ -n "$only" ]; then
  IFS=, read -r -a wanted <<<"$only"
  for w in "${wanted[@]}"; do
    found=""
    for i in "${!names[@]}"; do [ "${names[$i]}" = "$w" ] && selected+=("$i") && found=1; done
    [ -n "$found" ] || die "--only: no command '$w' in $spec (${names[*]})"
  done
else
  selected=("${!names[@]}")
fi

if [ -n "$list" ]; then
  echo "$spec:"
  for i in "${selected[@]}"; do
    printf '  %-16s %s\n  %-16s %s\n' "${names[$i]}" "${files[$i]}" "" "${commands[$i]}"
  done
  exit 0
fi

# --- the output directory -------------------------------------------------------------------------
build=${MPSBENCH_BUILD_DIR:-$repo/build-reproduce}
case $build in /*) ;; *) build=$PWD/$build ;; esac
if [ ${#args[@]} -eq 2 ]; then
  outdir=${args[1]}
  case $outdir in /*) ;; *) outdir=$PWD/$outdir ;; esac
  if [ -e "$outdir" ] || [ -L "$outdir" ]; then
    if [ ! -d "$outdir" ] || [ -L "$outdir" ] || [ -n "$(find "$outdir" -mindepth 1 -maxdepth 1 -print -quit)" ]; then
      die "$outdir is already there and not an empty directory: nothing is overwritten; name a new one"
    fi
  fi
  fresh=""
else
  outdir=$PWD/reproduce-$(basename "$devdir")-$(date +%Y%m%d-%H%M%S)
  fresh=1
fi

if [ -n "$dry" ]; then
  say "would write into $outdir (new)"
  [ -n "$build_it" ] && say "would build: cmake -S $repo -B $build -DCMAKE_BUILD_TYPE=Release -DMPSBENCH_BUILD_TESTS=OFF && cmake --build $build -j $(nproc)"
  for i in "${selected[@]}"; do
    say "would run ${names[$i]} (writes ${files[$i]}): BUILD=$build OUT=$outdir bash -c '${commands[$i]}'"
  done
  exit 0
fi

if [ "${MPSBENCH_REPRODUCE_SKIP_GPU_CHECK:-}" != 1 ]; then
  gpus=$(nvidia-smi -L 2>/dev/null | grep -c '^GPU ' || true)
  [ "${gpus:-0}" -gt 0 ] || die "no NVIDIA GPU here (nvidia-smi -L lists none): the published tables were measured on GPUs"
fi

if [ -n "$fresh" ]; then
  base=$outdir n=2
  until mkdir -p "$(dirname "$base")" && mkdir "$outdir" 2>/dev/null; do
    [ "$n" -le 100 ] || die "could not create a new directory $base-N"
    outdir=$base-$n
    n=$((n + 1))
  done
else
  mkdir -p "$outdir" || die "cannot create $outdir"
fi
mkdir -p "$outdir/logs"
cp "$spec" "$outdir/reproduce.txt"
comparison=$outdir/comparison.txt
: >"$comparison"

if [ "$(id -u)" = 0 ]; then
  say "running as root: OMPI_ALLOW_RUN_AS_ROOT=1 for mpirun"
  export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
fi
if ! command -v nvcc >/dev/null; then
  for d in /usr/local/cuda/bin /usr/local/cuda-*/bin; do
    if [ -x "$d/nvcc" ]; then export PATH="$d:$PATH"; break; fi
  done
fi

{
  echo "reproducing: ${devdir#"$repo"/} (${#selected[@]} of ${#names[@]} commands)"
  echo "date: $(date -u +%Y-%m-%dT%H:%M:%SZ)"
  echo "host: $(hostname), $(nproc) cores"
  echo "commit: $(git -C "$repo" rev-parse HEAD 2>/dev/null || echo unknown)$(git -C "$repo" status --porcelain 2>/dev/null | grep -q . && echo ' (dirty)')"
  echo "gpus:"
  if command -v nvidia-smi >/dev/null; then
    nvidia-smi --query-gpu=name,uuid,driver_version,memory.total,compute_mode,clocks.max.sm --format=csv,noheader 2>&1 |
      sed 's/^/  /'
  else
    echo "  none (no nvidia-smi)"
  fi
  echo "mpirun: $(mpirun --version 2>&1 | head -1)"
  echo "nvcc: $(nvcc --version 2>/dev/null | tail -1)"
} >"$outdir/machine.txt"
say "$(head -1 "$outdir/machine.txt"); output in $outdir"

# --- build ----------------------------------------------------------------------------------------
if [ -n "$build_it" ]; then
  say "building (Release) into $build; log in logs/build.log"
  if ! { cmake -S "$repo" -B "$build" -DCMAKE_BUILD_TYPE=Release -DMPSBENCH_BUILD_TESTS=OFF &&
         cmake --build "$build" -j "$(nproc)"; } >"$outdir/logs/build.log" 2>&1; then
    tail -30 "$outdir/logs/build.log"
    say "the build failed: nothing measured (log: $outdir/logs/build.log)"
    exit 1
  fi
elif [ ! -x "$build/mpsbench" ]; then
  die "--no-build: $build/mpsbench is not there"
fi

# --- the commands ---------------------------------------------------------------------------------
child=""
# shellcheck disable=SC2317  # called from the traps below
stop() {  # SIGNAL-NAME CODE: stop the running command's session, then leave
  trap '' INT TERM
  if [ -n "$child" ]; then
    say "interrupted: stopping ${names[$current]} (SIGTERM, then SIGKILL after 15 s)"
    kill -TERM -- "-$child" 2>/dev/null
    for _ in $(seq 30); do kill -0 -- "-$child" 2>/dev/null || break; sleep 0.5; done
    kill -KILL -- "-$child" 2>/dev/null
    wait "$child" 2>/dev/null
  fi
  say "interrupted by SIG$1; what ran is in $outdir"
  exit "$2"
}
trap 'stop INT 130' INT
trap 'stop TERM 143' TERM

statuses=() seconds=() bad=0 count=0
for i in "${selected[@]}"; do
  count=$((count + 1))
  current=$i
  name=${names[$i]}
  IFS=, read -r -a items <<<"${files[$i]}"
  for item in "${items[@]}"; do mkdir -p "$(dirname "$outdir/${item%%=*}")"; done
  say "[$count/${#selected[@]}] $name: ${commands[$i]}"
  start=$SECONDS
  # its own session, so that an interrupt can stop everything it started
  (cd "$repo" && BUILD=$build OUT=$outdir MPSBENCH_BUILD_DIR=$build \
     exec setsid bash -o pipefail -c "${commands[$i]}") </dev/null >"$outdir/logs/$name.log" 2>&1 &
  child=$!
  wait "$child"
  rc=$?
  child=""
  secs=$((SECONDS - start))
  say "$name: exit status $rc in $secs s (console: logs/$name.log)"
  missing=0
  for item in "${items[@]}"; do
    out=${item%%=*}
    published=$devdir/${item#*=}  # OUT=PUBLISHED, or OUT alone: the same name here
    python3 "$repo/scripts/reproduce/compare_published.py" "$published" "$outdir/$out" 2>&1 | tee -a "$comparison" ||
      missing=1
    echo | tee -a "$comparison"
  done
  [ "$rc" -eq 0 ] && [ "$missing" -eq 0 ] || bad=1
  statuses+=("$rc$([ "$missing" -eq 0 ] || echo ', a file missing')") seconds+=("$secs")
done

{
  printf '%-18s %-22s %8s  %s\n' command "exit status" seconds files
  for k in "${!statuses[@]}"; do
    i=${selected[$k]}
    printf '%-18s %-22s %8s  %s\n' "${names[$i]}" "${statuses[$k]}" "${seconds[$k]}" "${files[$i]}"
  done
} | tee "$outdir/summary.txt"
say "$([ "$bad" -eq 0 ] && echo "every command ran" || echo "not every command ran or wrote its files"); tables next to the published ones in $comparison"
exit "$bad"
