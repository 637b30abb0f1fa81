#include "runtime/check.hpp"

#include <mpi.h>

#include <cstdio>
#include <cstdlib>

#include "runtime/node_peers.hpp"

namespace mpsb {

void abort_fatal(const std::string& message) {
  std::fprintf(stderr, "mpsbench: fatal: %s%s\n", message.c_str(), exited_node_peers_suffix().c_str());
  std::fflush(stderr);
  MPI_Abort(MPI_COMM_WORLD, kExitFatal);
  std::_Exit(kExitFatal);  // MPI_Abort does not return; this says so to the compiler
}

void check_mpi(int status, const char* call, const char* file, int line) {
  if (status == MPI_SUCCESS) return;
  char text[MPI_MAX_ERROR_STRING] = {};
  int length = 0;
  if (MPI_Error_string(status, text, &length) != MPI_SUCCESS) {
    throw_fatal(call, "MPI error code " + std::to_string(status), file, line);
  }
  throw_fatal(call, std::string(text, static_cast<std::size_t>(length)), file, line);
}

}  // namespace mpsb
