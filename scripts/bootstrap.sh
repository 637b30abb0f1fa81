#!/usr/bin/env bash
# One entry point for a fresh Debian 12 / Ubuntu 24.04 machine (README):
#   scripts/bootstrap.sh run [mpsbench options]   deps + build + the MPS comparison: harness/mpsbench-sweep
#                                                 over timeslice, mps and streams, one merged results file,
#                                                 its HTML report, the table and one verdict per kernel
#   scripts/bootstrap.sh test                     deps + build + every test
# Idempotent: installs only missing packages, rebuilds incrementally.
#
# Environment: MPSBENCH_BUILD_DIR (default build/); MPSBENCH_RANKS, the most ranks per GPU of `run`
# (default 8: ranks per GPU 1,2,4,8); MPSBENCH_BOOTSTRAP_DRY_RUN=1: `run` prints the commands it would
# run and stops (no packages, no build); MPSBENCH_BOOTSTRAP_GPUS=N: `run` assumes N usable GPUs instead of
# asking build/mpsbench-probe (tests).
set -euo pipefail

repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
build=${MPSBENCH_BUILD_DIR:-$repo/build}
ranks=${MPSBENCH_RANKS:-8}
jobs=$(nproc)

# `run`: the measurement settings every mpsbench job of the comparison gets. The options given to
# `scripts/bootstrap.sh run` come after them, so they win. presets/compare.json: short windows after a
# timed warm-up, at least 3 repetitions and more only while the median's noise is above 1% (at most
# 1 s per configuration), so that the whole command, build included, stays within about 4 minutes
# on one H100 (README).
measure_args=(--preset compare)
# `run`: the MPS gain over timeslice that pays off, in the verdict lines and the report's crossover: the
# one definition's (core/mpsbench_core/verdict.py), which the sweep also records in its results file.
gain_threshold=$(python3 -c 'import sys; sys.path.insert(0, sys.argv[1]); from mpsbench_core.verdict import GAIN_THRESHOLD as t; print(f"{t:g}")' "$repo/core")

say() { printf 'bootstrap: %s\n' "$*"; }
die() { printf 'bootstrap: error: %s\n' "$*" >&2; exit 2; }

usage() {
  echo "usage: $0 run [mpsbench options] | $0 test"
  echo "  run: options go to every mpsbench job, except --output PATH, --ranks-per-gpu LIST, --mode(s) LIST,"
  echo "       --existing-daemon refuse|use and --gain-threshold X, which go to harness/mpsbench-sweep"
  exit 2
}

# Each requirement: the Debian/Ubuntu package that provides it and a check
# that it is already there (by capability, so tools installed another way count).
have() {
  case $1 in
    build-essential) command -v g++ >/dev/null && command -v make >/dev/null ;;
    cmake) command -v cmake >/dev/null ;;
    python3-venv) python3 -c 'import venv, ensurepip' 2>/dev/null ;;
    openmpi-bin) command -v mpirun >/dev/null ;;
    libopenmpi-dev) command -v mpicxx >/dev/null ;;
    nlohmann-json3-dev) [ -f /usr/include/nlohmann/json.hpp ] ;;
    libbenchmark-dev) [ -f /usr/include/benchmark/benchmark.h ] ;;
    libgtest-dev) [ -f /usr/include/gtest/gtest.h ] ;;
    libvalijson-dev) [ -f /usr/include/valijson/validator.hpp ] ;;
    chromium) command -v chromium >/dev/null || command -v chromium-browser >/dev/null ;;
    python3-pandas) python3 -c 'import pandas' 2>/dev/null ;;
    python3-matplotlib) python3 -c 'import matplotlib' 2>/dev/null ;;
    python3-jsonschema) python3 -c 'import jsonschema' 2>/dev/null ;;
    *) return 1 ;;
  esac
}
base_packages=(build-essential cmake openmpi-bin libopenmpi-dev nlohmann-json3-dev libbenchmark-dev libgtest-dev)
test_packages=(libvalijson-dev python3-venv)

install_packages() {
  local missing=()
  for p in "$@"; do have "$p" || missing+=("$p"); done
  [ ${#missing[@]} -eq 0 ] && return 0
  local sudo=()
  if [ "$(id -u)" != 0 ]; then
    command -v sudo >/dev/null || die "missing packages (${missing[*]}) and not root: install them first"
    sudo=(sudo)
  fi
  say "installing ${missing[*]}"
  "${sudo[@]}" apt-get update -qq
  DEBIAN_FRONTEND=noninteractive "${sudo[@]}" apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
}

find_nvcc() {
  command -v nvcc >/dev/null && return 0
  for d in /usr/local/cuda/bin /usr/local/cuda-*/bin; do
    if [ -x "$d/nvcc" ]; then export PATH="$d:$PATH"; return 0; fi
  done
  die "nvcc not found: install the CUDA Toolkit (13.x) and put its bin/ on PATH"
}

# The CUDA architectures of the build: where nvidia-smi finds a GPU, only that GPU's
# (CMAKE_CUDA_ARCHITECTURES=native: one device code instead of the portable default's three, and the build
# is part of README command 1's four minutes). Without a GPU, `run` builds the portable default of
# CMakeLists.txt (-U: a `run` before must not leave `native` in the cache) and `test` one architecture:
# no test runs device code there, and the kernels have no per-architecture branches (no __CUDA_ARCH__),
# so one architecture compiles all of it, in a third of the time.
cuda_arch_args() {
  if command -v nvidia-smi >/dev/null && [ "$(nvidia-smi -L 2>/dev/null | grep -c '^GPU ' || true)" -gt 0 ]; then
    echo "-DCMAKE_CUDA_ARCHITECTURES=native"
  elif [ "${1:-}" = test ]; then
    echo "-DCMAKE_CUDA_ARCHITECTURES=90-real"
  else
    echo "-UCMAKE_CUDA_ARCHITECTURES"
  fi
}

# configure_and_build [--target T...]: configures with the cmake options (-D...) given, builds everything or
# only the targets named. A configuration for the local GPU (native) that CMake or nvcc cannot make (nvcc sees
# no GPU in this container) falls back to the portable default, saying so.
configure_and_build() {
  local defs=() targets=()
  while [ $# -gt 0 ]; do
    case $1 in
      --target) shift; while [ $# -gt 0 ] && [ "${1#-}" = "$1" ]; do targets+=("$1"); shift; done ;;
      *) defs+=("$1"); shift ;;
    esac
  done
  find_nvcc
  if ! cmake -S "$repo" -B "$build" -DCMAKE_BUILD_TYPE=Release "${defs[@]}" >/dev/null; then
    [[ " ${defs[*]} " == *" -DCMAKE_CUDA_ARCHITECTURES=native "* ]] || exit 1
    say "CUDA for the local GPU only (native) could not be configured: building for the portable default instead"
    defs=("${defs[@]/-DCMAKE_CUDA_ARCHITECTURES=native/-UCMAKE_CUDA_ARCHITECTURES}")
    cmake -S "$repo" -B "$build" -DCMAKE_BUILD_TYPE=Release "${defs[@]}" >/dev/null
  fi
  cmake --build "$build" -j "$jobs" ${targets[@]+--target "${targets[@]}"}
}

# --- run: the comparison -------------------------------------------------------------------------

# Installs the analysis package (mpsbench-analyze) into a venv under the build directory; reuses the
# system's packages (--system-site-packages) and skips pip when nothing changed since the last install.
install_analysis() {
  local venv=$build/analysis-venv stamp=$build/analysis-venv/.mpsbench-run-installed
  if [ -x "$venv/bin/mpsbench-analyze" ] && [ -f "$stamp" ] &&
     [ -z "$(find "$repo/analysis/pyproject.toml" "$repo/analysis/src" -newer "$stamp" -not -path '*/__pycache__*' \
             -print -quit)" ]; then
    return 0
  fi
  [ -x "$venv/bin/python" ] || python3 -m venv --system-site-packages "$venv"
  "$venv/bin/python" -m pip install -q --disable-pip-version-check --timeout 15 --retries 1 "$repo/analysis"
  touch "$stamp"
}

# Where pip cannot install the analysis (GPU compute nodes are often offline): the Debian/Ubuntu packages
# of its dependencies, when apt offers all of them here and may install without asking for a password; the
# analysis then runs from the source tree with the system python3.
debian_analysis_packages=(python3-pandas python3-matplotlib python3-jsonschema)
system_python=/usr/bin/python3  # the interpreter those packages are for
install_analysis_debian() {
  local p
  for p in "${debian_analysis_packages[@]}"; do
    have "$p" && continue
    apt-cache policy "$p" 2>/dev/null | grep -q 'Candidate: [0-9]' || return 1
  done
  [ "$(id -u)" = 0 ] || sudo -n true 2>/dev/null || return 1
  install_packages "${debian_analysis_packages[@]}"
}

# pick_analyzer RESULTS: sets analyzer=(...) to the command that makes the report once the install above has
# ended: the venv's mpsbench-analyze where pip installed it (its stamp), else the source tree with a python3
# that has the dependencies (an environment that had them already, or the system's with the Debian packages:
# pip offline fails there, and the report can still be made), else none, saying in one line how to make it
# elsewhere.
pick_analyzer() {
  local venv=$build/analysis-venv py
  analyzer=()
  if [ -x "$venv/bin/mpsbench-analyze" ] && [ -f "$venv/.mpsbench-run-installed" ]; then
    analyzer=("$venv/bin/mpsbench-analyze")
    return 0
  fi
  # The python3 first on PATH (perhaps a virtual environment's), then the system's, where apt puts the
  # Debian packages of install_analysis_debian.
  for py in python3 "$system_python"; do
    if command -v "$py" >/dev/null &&
       "$py" -c 'import sys, pandas, matplotlib, numpy, jsonschema; sys.exit(sys.version_info < (3, 11))' 2>/dev/null; then
      analyzer=(env "PYTHONPATH=$repo/analysis/src" PYTHONDONTWRITEBYTECODE=1 "$py" -m mpsbench_analysis)
      return 0
    fi
  done
  say "no HTML report here: pip could not install the analysis (offline? $build/analysis-install.log); make it on any machine with pip from the results file: pip install ./analysis && mpsbench-analyze report $(quoted "$1") (or here: apt-get install ${debian_analysis_packages[*]})"
}

# "COUNT PROBLEM": the usable GPUs as CUDA sees them in this environment (CUDA_VISIBLE_DEVICES honoured).
count_gpus() {
  if [ -n "${MPSBENCH_BOOTSTRAP_GPUS:-}" ]; then
    echo "$MPSBENCH_BOOTSTRAP_GPUS (MPSBENCH_BOOTSTRAP_GPUS)"
  elif [ -x "$build/mpsbench-probe" ]; then
    timeout 120 "$build/mpsbench-probe" 2>/dev/null | python3 -c '
import json, sys
try:
    d = json.loads(sys.stdin.read().strip().splitlines()[-1])
    print(len(d["gpus"]), d.get("problem") or "")
except (ValueError, IndexError, KeyError, TypeError):
    print(0, "mpsbench-probe gave no answer")' || echo "0 mpsbench-probe failed"
  elif command -v nvidia-smi >/dev/null; then
    echo "$(nvidia-smi -L 2>/dev/null | grep -c '^GPU ' || true) (nvidia-smi -L)"
  else
    echo "0 no nvidia-smi"
  fi
}

# The arguments as one shell command line (shlex.join: quoted only where needed).
quoted() { python3 -c 'import shlex, sys; print(shlex.join(sys.argv[1:]))' "$@"; }

# "1,2,4,...,max"
powers_up_to() {
  local k=1 list=""
  while [ "$k" -lt "$1" ]; do list+="$k,"; k=$((k * 2)); done
  echo "$list$1"
}

# "4 min 1 s" for a count of seconds.
minutes_seconds() { if [ "$1" -ge 60 ]; then echo "$(($1 / 60)) min $(($1 % 60)) s"; else echo "$1 s"; fi; }

run_compare() {
  local started=$SECONDS dry=${MPSBENCH_BOOTSTRAP_DRY_RUN:-}
  # Where the command's time went, said on its last line: packages and build, the GPU probe, the analysis
  # install (waiting for it to end and finding what it left), the comparison itself and the report.
  local mark=$SECONDS took_build=0 took_probe=0 took_wait=0 took_sweep=0 took_report=""
  # Options for the sweep itself; everything else goes to mpsbench.
  local sweep_opts=() user_args=() output="" modes="" rpg="" want_cpu="" has_gpus="" flag value
  while [ $# -gt 0 ]; do
    flag=${1%%=*}
    case $flag in
      -h|--help) usage ;;
      --output|--ranks-per-gpu|--mode|--modes|--existing-daemon|--gain-threshold)
        if [ "$flag" != "$1" ]; then value=${1#*=}; shift
        else [ $# -ge 2 ] || die "$1: missing value"; value=$2; shift 2; fi
        case $flag in
          --output) output=$value ;;
          --ranks-per-gpu) rpg=$value ;;
          --mode|--modes) modes=$value ;;
          --gain-threshold) gain_threshold=$value ;;
          *) sweep_opts+=("$flag" "$value") ;;
        esac ;;
      *)
        case $1 in
          --device=cpu) want_cpu=1 ;;
          --device) [ "${2:-}" = cpu ] && want_cpu=1 ;;
          --gpus|--gpus=*) has_gpus=1 ;;
        esac
        user_args+=("$1"); shift ;;
    esac
  done

  analysis_pid=""  # global: the EXIT trap ends a pip still running when the script stops early
  if [ "$dry" != 1 ]; then
    install_packages "${base_packages[@]}"
    # Only the HTML report needs a venv: without one the comparison still runs.
    (install_packages python3-venv) || say "python3-venv could not be installed: no HTML report this time"
    mkdir -p "$build"
    if [ -f "$repo/analysis/pyproject.toml" ]; then
      # pip works while the build runs (no measurement is disturbed); its output goes to a log.
      { install_analysis || install_analysis_debian; } >"$build/analysis-install.log" 2>&1 &
      analysis_pid=$!
      trap '[ -n "$analysis_pid" ] && kill "$analysis_pid" 2>/dev/null; true' EXIT
    fi
    # Only what the run needs: mpsbench and the probe that counts the GPUs (not the tests, not the examples).
    configure_and_build "$(cuda_arch_args)" --target mpsbench mpsbench-probe
  fi
  took_build=$((SECONDS - mark)) mark=$SECONDS

  local gpus problem device_args=()
  read -r gpus problem <<<"$(count_gpus)"
  took_probe=$((SECONDS - mark))
  [[ $gpus =~ ^[0-9]+$ ]] || gpus=0
  if [ "$gpus" -eq 0 ] || [ -n "$want_cpu" ]; then
    if [ -z "$want_cpu" ]; then
      say "no usable NVIDIA GPU (${problem:-none found}): the MPS comparison needs one; running the CPU engine instead (mode streams on the CPU device)"
    fi
    modes=${modes:-streams}
    rpg=${rpg:-1,2,4}
    device_args=(--device cpu)
  else
    if [ -z "$modes" ]; then
      modes=timeslice,mps,streams
      if ! command -v nvidia-cuda-mps-control >/dev/null; then
        say "nvidia-cuda-mps-control is not on PATH (the NVIDIA driver's compute utilities): comparing timeslice and streams only, no MPS"
        modes=timeslice,streams
      fi
    fi
    rpg=${rpg:-$(powers_up_to "$ranks")}
    # Every rank gets a core of its own (the hybrid kernel's CPU work is part of the measurement): as many
    # GPUs as the cores allow at the most ranks per GPU, at least one.
    local most=1 k cores use
    for k in ${rpg//,/ }; do [[ $k =~ ^[0-9]+$ ]] && [ "$k" -gt "$most" ] && most=$k; done
    cores=$(nproc)
    use=$((cores / most))
    [ "$use" -ge 1 ] || use=1
    if [ "$use" -lt "$gpus" ] && [ -z "$has_gpus" ]; then
      say "using $use of $gpus GPUs: $most ranks per GPU, $cores cores (pass --gpus LIST to choose)"
      device_args=(--gpus "$(seq -s, 0 $((use - 1)))")
    fi
  fi

  if [ -z "$output" ]; then
    local stamp base n=2
    stamp=$(date +%Y%m%d-%H%M%S)
    base=mpsbench-compare-$stamp
    while [ -e "$base.json" ] || [ -L "$base.json" ] || [ -e "$base.html" ] || [ -L "$base.html" ] ||
          [ -e "$base-work" ]; do
      base=mpsbench-compare-$stamp-$n
      n=$((n + 1))
    done
    output=$base.json
  fi
  local html=${output%.json}.html
  local sweep=("$repo/harness/mpsbench-sweep" --modes "$modes" --ranks-per-gpu "$rpg" --mpsbench "$build/mpsbench"
               --output "$output" --gain-threshold "$gain_threshold" "${sweep_opts[@]}"
               -- "${device_args[@]}" "${measure_args[@]}" "${user_args[@]}")
  local report=(mpsbench-analyze report "$output" -o "$html" --threshold "$gain_threshold")
  if [ "$dry" = 1 ]; then
    say "would build: $(quoted cmake -S "$repo" -B "$build" -DCMAKE_BUILD_TYPE=Release "$(cuda_arch_args)") &&" \
        "$(quoted cmake --build "$build" -j "$jobs" --target mpsbench mpsbench-probe)"
    say "would run: $(quoted "${sweep[@]}")"
    say "then: $(quoted "${report[@]}")"
    return 0
  fi

  analyzer=()
  mark=$SECONDS
  if [ -n "$analysis_pid" ]; then
    wait "$analysis_pid" || true
    analysis_pid=""
    pick_analyzer "$output"
  fi

  say "comparing $modes at $rpg ranks per GPU: $(quoted "${sweep[@]}")"
  local rc=0
  took_wait=$((SECONDS - mark)) mark=$SECONDS
  "${sweep[@]}" || rc=$?
  took_sweep=$((SECONDS - mark))
  [ "$rc" -lt 128 ] || exit "$rc"  # interrupted: the sweep has cleaned up and said so

  local written=""
  if [ -f "$output" ]; then
    written="results in $output"
    if [ ${#analyzer[@]} -gt 0 ]; then
      local err
      mark=$SECONDS
      if err=$("${analyzer[@]}" "${report[@]:1}" 2>&1 >/dev/null); then
        written+=", report in $html"
        took_report=", the report $((SECONDS - mark)) s"
      else
        say "no HTML report: mpsbench-analyze report failed: ${err##*$'\n'}"
      fi
    fi
  fi
  say "${written:-no results written}; logs in ${output%.json}-work/ ($(minutes_seconds $((SECONDS - started))) in all:" \
      "packages and build $took_build s, GPU probe $took_probe s, the analysis install $took_wait s," \
      "the comparison $(minutes_seconds "$took_sweep")$took_report)"
  exit "$rc"
}

# The report's browser test (analysis/tests/test_report_browser.py) needs Chromium. Debian packages
# it as a deb; Ubuntu's `chromium` deb only installs a snap, which containers cannot run, so there
# it is installed where apt can and the browser test skips (saying so) where not.
install_browser() {
  if . /etc/os-release 2>/dev/null && [ "${ID:-}" = debian ]; then
    install_packages chromium
  elif ! have chromium; then
    say "no chromium (Debian's package is a snap on ${ID:-this system}): the report's browser test will skip"
  fi
}

run_tests() {
  local started=$SECONDS mark=$SECONDS phases=()
  lap() { phases+=("$1 $((SECONDS - mark)) s"); mark=$SECONDS; }
  install_packages "${base_packages[@]}" "${test_packages[@]}"
  install_browser
  lap packages
  # pip mostly downloads: it installs the analysis package while the build compiles.
  local venv=$build/analysis-venv pip_log=$build/analysis-install.log
  background_pids=()  # global: the EXIT trap ends what still runs when the script stops early
  trap 'for pid in "${background_pids[@]}"; do kill "$pid" 2>/dev/null; done; true' EXIT
  if [ -f "$repo/analysis/pyproject.toml" ]; then
    mkdir -p "$build"
    { [ -x "$venv/bin/python" ] || python3 -m venv "$venv"
      "$venv/bin/python" -m pip install -q --disable-pip-version-check "$repo/analysis[test]"; } >"$pip_log" 2>&1 &
    background_pids+=($!)
  fi
  # Most tests wait (on fake programs, measurement windows, mpirun): ctest counts two slots a core, a test
  # that keeps a core busy takes two (tests/CMakeLists.txt, MPSBENCH_TEST_SLOTS_PER_CORE) and one that
  # waits one, so waiting tests overlap.
  local slots_per_core=2
  configure_and_build -DMPSBENCH_REQUIRE_SCHEMA_TESTS=ON "$(cuda_arch_args test)" \
    -DMPSBENCH_TEST_SLOTS_PER_CORE=$slots_per_core
  lap build
  local failed=() pytest_log=$build/pytest.log
  if [ -f "$repo/analysis/pyproject.toml" ]; then
    wait "${background_pids[0]}" || { cat "$pip_log" >&2; die "pip could not install the analysis package (above)"; }
    lap "analysis install (after the build)"
    # pytest keeps the cores busy while ctest's tests wait: the two run side by side (pytest-xdist, one
    # worker a core), pytest's output in a log printed when both are done.
    (cd "$repo" && exec "$venv/bin/python" -m pytest analysis/tests -q -n "$jobs") >"$pytest_log" 2>&1 &
    background_pids=($!)
  fi
  ctest --test-dir "$build" --output-on-failure -j "$((jobs * slots_per_core))" || failed+=(ctest)
  lap ctest
  if [ ${#background_pids[@]} -gt 0 ]; then
    wait "${background_pids[0]}" || failed+=(pytest)
    background_pids=()
    cat "$pytest_log"
    lap "pytest (after ctest)"
  fi
  [ ${#failed[@]} -eq 0 ] || die "failed: ${failed[*]} (output above)"
  # What an HPC centre does: install into a prefix and as a DEB package, and run it from there with the tree
  # out of sight (installed from this build: no second build where a mount namespace can hide the tree).
  MPSBENCH_INSTALL_CHECK_JOBS=$jobs MPSBENCH_INSTALL_CHECK_BUILD=$build "$repo/tests/install/check_installed.sh"
  lap "install check"
  local IFS=,
  say "every test passed in $(minutes_seconds $((SECONDS - started))):${phases[*]/#/ }"
}

# Sourced (tests/sweep/test_bootstrap.py calls its functions): define, run nothing.
[ "${BASH_SOURCE[0]}" = "$0" ] || return 0
case "${1:-}" in
  run) shift; run_compare "$@" ;;
  test) shift; [ $# -eq 0 ] || usage; run_tests ;;
  *) usage ;;
esac
