#!/usr/bin/env bash
# usage: expect_exit.sh CODE PATTERN MPIEXEC NP MPSBENCH ARGS...
# Passes when mpsbench exits with CODE and its stderr is exactly one line
# containing PATTERN (fixed string).
set -uo pipefail
code=$1 pattern=$2 mpiexec=$3 np=$4 mpsbench=$5
shift 5
here=$(cd "$(dirname "$0")" && pwd)
source "$here/mpiexec_flags.sh"
err=$(mktemp)
trap 'rm -f "$err"' EXIT
"$mpiexec" $(mpiexec_flags "$np") -np "$np" "$mpsbench" "$@" 2>"$err" >/dev/null
status=$?
# mpirun adds its own notes about the non-zero exit; keep mpsbench's lines only.
lines=$(grep '^mpsbench:' "$err")
count=$(printf '%s' "$lines" | grep -c .)
if [ "$status" -ne "$code" ]; then
  echo "expected exit code $code, got $status; stderr:"; cat "$err"; exit 1
fi
if [ "$count" -ne 1 ]; then
  echo "expected exactly one mpsbench error line, got $count:"; cat "$err"; exit 1
fi
if ! grep -qF -- "$pattern" <<<"$lines"; then
  echo "error line does not contain '$pattern': $lines"; exit 1
fi
echo "ok: exit $status: $lines"
