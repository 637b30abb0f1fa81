#!/bin/sh
# An --app-check for the examples: the run counts only when its stdout (the
# file mpsbench-sweep names in MPSBENCH_APP_STDOUT) says result=ok, as
# small-kernels and torch_matmul_cpu.py print after verifying their result.
#   harness/mpsbench-sweep --app build/small-kernels --app-check examples/check_output.sh
# Exit status: 0 result=ok found, 1 not found, 2 no readable file to look in.
if [ -z "${MPSBENCH_APP_STDOUT:-}" ]; then
  echo "check_output.sh: error: MPSBENCH_APP_STDOUT is not set (run it through mpsbench-sweep --app-check)" >&2
  exit 2
fi
if [ ! -r "$MPSBENCH_APP_STDOUT" ] || [ -d "$MPSBENCH_APP_STDOUT" ]; then
  echo "check_output.sh: error: MPSBENCH_APP_STDOUT='$MPSBENCH_APP_STDOUT' is not a readable file" >&2
  exit 2
fi
grep -qE 'result=ok([[:space:]]|$)' "$MPSBENCH_APP_STDOUT"
