# mpiexec_flags NP: what Open MPI needs on this machine: permission to run as
# root (CI containers) and oversubscription when NP exceeds the cores.
mpiexec_flags() {
  local np=$1 flags=()
  if [ "$(id -u)" = 0 ]; then flags+=(--allow-run-as-root); fi
  if [ "$np" -gt "$(nproc)" ]; then flags+=(--oversubscribe); fi
  echo "${flags[@]}"
}
# When a rank fails, Open MPI sends the others SIGTERM and waits odls_base_sigkill_timeout (1 s) before
# SIGKILL, about 2 s before mpirun exits: most of each bad-input test's time. mpsbench handles no SIGTERM
# (it ends at once), so the wait only costs time; a caller's own setting wins.
export OMPI_MCA_odls_base_sigkill_timeout=${OMPI_MCA_odls_base_sigkill_timeout:-0}
