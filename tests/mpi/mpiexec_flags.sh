# mpiexec_flags NP: what Open MPI needs on this machine: permission to run as
# root (CI containers) and oversubscription when NP exceeds the cores.
mpiexec_flags() {
  local np=$1 flags=()
  if [ "$(id -u)" = 0 ]; then flags+=(--allow-run-as-root); fi
  if [ "$np" -gt "$(nproc)" ]; then flags+=(--oversubscribe); fi
  echo "${flags[@]}"
}
