#!/usr/bin/env bash
# usage: expect_micro_exit.sh CODE PATTERN PROGRAM ARGS...
# Passes when PROGRAM exits with CODE, prints nothing on stdout (no benchmark
# ran) and its stderr is one line containing PATTERN (fixed string).
set -uo pipefail
code=$1 pattern=$2
shift 2
err=$(mktemp) out=$(mktemp)
trap 'rm -f "$err" "$out"' EXIT
"$@" 2>"$err" >"$out"
status=$?
if [ "$status" -ne "$code" ]; then
  echo "expected exit code $code, got $status; stderr:"; cat "$err"; exit 1
fi
if [ -s "$out" ]; then
  echo "expected no output on stdout, got:"; head -5 "$out"; exit 1
fi
if [ "$(grep -c . "$err")" -ne 1 ] || ! grep -qF -- "$pattern" "$err"; then
  echo "expected one stderr line containing '$pattern', got:"; cat "$err"; exit 1
fi
echo "ok: exit $status: $(cat "$err")"
