#!/usr/bin/env bash
# usage: expect_exit_with_kernel.sh KERNEL CODE PATTERN MPIEXEC NP MPSBENCH ARGS...
# expect_exit.sh for input that names KERNEL: exits 77 (ctest's skip) while
# mpsbench --list-kernels does not list it, else runs expect_exit.sh.
set -uo pipefail
kernel=$1 mpsbench=$6
shift
if ! "$mpsbench" --list-kernels | grep -q "^$kernel:"; then
  echo "expect_exit_with_kernel.sh: kernel '$kernel' is not registered in $mpsbench: skipping"
  exit 77
fi
exec bash "$(cd "$(dirname "$0")" && pwd)/expect_exit.sh" "$@"
