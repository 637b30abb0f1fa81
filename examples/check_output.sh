#!/bin/sh
# An --app-check for the examples: the run counts only when its stdout (the
# file mpsbench-sweep names in MPSBENCH_APP_STDOUT) says result=ok.
#   harness/mpsbench-sweep --app build/small-kernels --app-check examples/check_output.sh
if [ -z "${MPSBENCH_APP_STDOUT:-}" ]; then
  echo "check_output.sh: error: MPSBENCH_APP_STDOUT is not set (run it through mpsbench-sweep --app-check)" >&2
  exit 2
fi
grep -q 'result=ok' "$MPSBENCH_APP_STDOUT"
