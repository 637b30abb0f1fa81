// The other processes of the job on this host, as world rank and process id,
// recorded once at start-up. A rank that dies of a fatal error names those
// that were already gone: under MPS the death of one client (kill -9, a
// crash) faults every other client of the same server, and those report
// first, so without this line the rank that started it goes unnamed.
// Assumes the ranks of a host share one process-id namespace (as mpirun's
// ranks do); ranks in separate containers would all look exited.
#pragma once

#include <sys/types.h>

#include <string>
#include <vector>

namespace mpsb {

struct NodePeer {
  int world_rank = -1;
  pid_t pid = 0;
};

// Set once after the node communicator exists (mpi_context.cpp).
void set_node_peers(std::vector<NodePeer> peers);
// "rank 3 (pid 1507) on this host had already exited", for every recorded
// peer other than this process whose process is gone or a zombie; "" if none.
std::string exited_node_peers();
// The same as a suffix for a fatal message: "; rank 3 ..." or "".
std::string exited_node_peers_suffix();

}  // namespace mpsb
