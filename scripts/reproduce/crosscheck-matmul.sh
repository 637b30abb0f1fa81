#!/usr/bin/env bash
# An independent check of a results file's matmul throughput: scripts/tools/crosscheck_matmul.py
# (PyTorch + mpi4py, another stack over cuBLAS) at fp32, N = SIZE, at 1 and 4 ranks time-sliced and
# at 4 ranks under MPS, each line with the results file's figure for the same configuration and
# the ratio. The time-sliced runs see an empty MPS pipe directory, so they cannot become clients of
# a daemon already running; the MPS run gets a private daemon, stopped and removed at the end
# (also when interrupted).
#
# Usage: scripts/reproduce/crosscheck-matmul.sh RESULTS.json [SIZE] (default 2048), from the
# repository root; one line per run on stdout. Needs PyTorch with CUDA, mpi4py, mpirun and, for
# the MPS line, nvidia-cuda-mps-control. Exit status: 0 all three ran, 1 one failed, 2 bad usage
# or PyTorch/mpi4py missing.
set -uo pipefail
results=${1:-}
size=${2:-2048}
if [ -z "$results" ] || [ ! -f "$results" ]; then
  echo "usage: $0 RESULTS.json [SIZE]   (RESULTS.json: an mpsbench results file with matmul fp32 N=SIZE)" >&2
  exit 2
fi
here=$(cd "$(dirname "$0")/../.." && pwd)
probe=("$here/scripts/tools/crosscheck_matmul.py" --size "$size" --precision fp32 --results "$results")
if ! python3 -c 'import torch, mpi4py; assert torch.cuda.is_available()' 2>/dev/null; then
  echo "crosscheck-matmul.sh: python3 lacks PyTorch with CUDA or mpi4py: no cross-check" >&2
  exit 2
fi
if [ "$(id -u)" = 0 ]; then export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1; fi

empty=$(mktemp -d "${TMPDIR:-/tmp}/crosscheck-nomps.XXXXXX") || exit 2
pipe="" logs=""
# shellcheck disable=SC2317  # the EXIT trap calls it
cleanup() {
  if [ -n "$pipe" ]; then
    echo quit | CUDA_MPS_PIPE_DIRECTORY=$pipe nvidia-cuda-mps-control >/dev/null 2>&1
    sleep 2  # the server exits after the daemon
  fi
  rm -rf -- "$empty" ${pipe:+"$pipe"} ${logs:+"$logs"}
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

rc=0
for np in 1 4; do
  CUDA_MPS_PIPE_DIRECTORY=$empty mpirun -np "$np" -x CUDA_MPS_PIPE_DIRECTORY python3 "${probe[@]}" --mode timeslice || rc=1
done
if command -v nvidia-cuda-mps-control >/dev/null; then
  pipe=$(mktemp -d "${TMPDIR:-/tmp}/crosscheck-mps-pipe.XXXXXX") && logs=$(mktemp -d "${TMPDIR:-/tmp}/crosscheck-mps-log.XXXXXX") ||
    exit 1
  export CUDA_MPS_PIPE_DIRECTORY=$pipe CUDA_MPS_LOG_DIRECTORY=$logs
  if nvidia-cuda-mps-control -d; then
    mpirun -np 4 -x CUDA_MPS_PIPE_DIRECTORY -x CUDA_MPS_LOG_DIRECTORY python3 "${probe[@]}" --mode mps || rc=1
  else
    echo "crosscheck-matmul.sh: the MPS control daemon did not start: no MPS line" >&2
    rc=1
  fi
else
  echo "crosscheck-matmul.sh: nvidia-cuda-mps-control is not on PATH: no MPS line" >&2
  rc=1
fi
exit "$rc"
