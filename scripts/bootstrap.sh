#!/usr/bin/env bash
# One entry point for a fresh Debian 12 / Ubuntu 24.04 machine (README):
#   scripts/bootstrap.sh run [mpsbench options]   deps + build + mpirun -np 8 mpsbench
#   scripts/bootstrap.sh test                     deps + build + every test
# Idempotent: installs only missing packages, rebuilds incrementally.
set -euo pipefail

repo=$(cd "$(dirname "$0")/.." && pwd)
build=${MPSBENCH_BUILD_DIR:-$repo/build}
ranks=${MPSBENCH_RANKS:-8}
jobs=$(nproc)

say() { printf 'bootstrap: %s\n' "$*"; }
die() { printf 'bootstrap: error: %s\n' "$*" >&2; exit 2; }

usage() {
  echo "usage: $0 run [mpsbench options] | $0 test"
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

configure_and_build() {
  find_nvcc
  cmake -S "$repo" -B "$build" -DCMAKE_BUILD_TYPE=Release "$@" >/dev/null
  cmake --build "$build" -j "$jobs"
}

# Open MPI refuses root without these, and more ranks than cores without --oversubscribe.
mpirun_flags() {
  local np=$1 flags=()
  [ "$(id -u)" = 0 ] && flags+=(--allow-run-as-root)
  [ "$np" -gt "$(nproc)" ] && flags+=(--oversubscribe)
  echo "${flags[@]}"
}

run_suite() {
  install_packages "${base_packages[@]}"
  configure_and_build
  say "mpirun -np $ranks mpsbench $*"
  # shellcheck disable=SC2046
  exec mpirun $(mpirun_flags "$ranks") -np "$ranks" "$build/mpsbench" "$@"
}

run_tests() {
  install_packages "${base_packages[@]}" "${test_packages[@]}"
  configure_and_build -DMPSBENCH_REQUIRE_SCHEMA_TESTS=ON
  ctest --test-dir "$build" --output-on-failure -j "$jobs"
  if [ -f "$repo/analysis/pyproject.toml" ]; then
    local venv=$build/analysis-venv
    [ -x "$venv/bin/python" ] || python3 -m venv "$venv"
    "$venv/bin/python" -m pip install -q --disable-pip-version-check "$repo/analysis[test]"
    (cd "$repo" && "$venv/bin/python" -m pytest analysis/tests -q)
  fi
}

case "${1:-}" in
  run) shift; run_suite "$@" ;;
  test) shift; [ $# -eq 0 ] || usage; run_tests ;;
  *) usage ;;
esac
