// Checked calls in the harness: the CUDA and cuBLAS checks of the kernels
// (cuda_check.hpp) plus MPI's, and the fatal exit every rank takes on a
// FatalError: MPI_Abort, so no other rank is left waiting.
#pragma once

#include <string>

#include "cuda_check.hpp"

namespace mpsb {

// Prints "mpsbench: fatal: MESSAGE" plus the processes of this host that had
// already exited (node_peers.hpp), then takes the whole job down with
// MPI_Abort(kExitFatal), so no rank is left waiting. Any thread may call it.
[[noreturn]] void abort_fatal(const std::string& message);

void check_mpi(int status, const char* call, const char* file, int line);

}  // namespace mpsb

#define MPSB_MPI(call) ::mpsb::check_mpi((call), #call, __FILE__, __LINE__)
