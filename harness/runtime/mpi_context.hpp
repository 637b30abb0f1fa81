// Who this process is in the job: world rank, node-local rank (from
// MPI_Comm_split_type SHARED) and host name, plus the few collective helpers
// the harness needs.
#pragma once

#include <mpi.h>

#include <string>
#include <vector>

namespace mpsb {

struct MpiContext {
  MPI_Comm world = MPI_COMM_WORLD;
  MPI_Comm node = MPI_COMM_NULL;  // ranks sharing this host's memory
  int rank = 0;
  int size = 1;
  int local_rank = 0;
  int local_size = 1;
  std::string host;
};

// Call after MPI_Init. Makes MPI errors return codes (checked by MPSB_MPI)
// instead of aborting without a message.
MpiContext make_mpi_context();
void free_mpi_context(MpiContext& ctx);

// Every rank's string, in rank order, on every rank.
std::vector<std::string> allgather_strings(MPI_Comm comm, const std::string& mine);
// Every rank's string on `root` (empty vector elsewhere).
std::vector<std::string> gather_strings(MPI_Comm comm, const std::string& mine, int root);
std::string mpi_library_version();
// Until the nonblocking operation `request` completes, polled every 0.5 ms
// and asleep in between.
void wait_asleep(MPI_Request& request);
// A barrier that sleeps while it waits: ranks idle during a configuration
// must not spin in MPI and steal cores (or turbo headroom) from active ranks.
void quiet_barrier(MPI_Comm comm);

}  // namespace mpsb
