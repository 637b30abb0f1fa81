#include "runtime/mpi_context.hpp"

#include <unistd.h>

#include <chrono>
#include <thread>

#include "runtime/check.hpp"
#include "runtime/node_peers.hpp"

namespace mpsb {
namespace {

std::vector<std::string> split_by_counts(const std::vector<char>& data, const std::vector<int>& counts,
                                         const std::vector<int>& displs) {
  std::vector<std::string> out(counts.size());
  for (std::size_t r = 0; r < counts.size(); ++r) {
    out[r].assign(data.data() + displs[r], static_cast<std::size_t>(counts[r]));
  }
  return out;
}

std::vector<int> displacements(const std::vector<int>& counts, std::size_t* total) {
  std::vector<int> displs(counts.size());
  std::size_t sum = 0;
  for (std::size_t r = 0; r < counts.size(); ++r) {
    displs[r] = static_cast<int>(sum);
    sum += static_cast<std::size_t>(counts[r]);
  }
  *total = sum;
  return displs;
}

}  // namespace

MpiContext make_mpi_context() {
  MpiContext ctx;
  MPSB_MPI(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN));
  MPSB_MPI(MPI_Comm_rank(ctx.world, &ctx.rank));
  MPSB_MPI(MPI_Comm_size(ctx.world, &ctx.size));
  char name[MPI_MAX_PROCESSOR_NAME] = {};
  int length = 0;
  MPSB_MPI(MPI_Get_processor_name(name, &length));
  ctx.host.assign(name, static_cast<std::size_t>(length));
  set_error_identity(ctx.rank, ctx.host);
  MPSB_MPI(MPI_Comm_split_type(ctx.world, MPI_COMM_TYPE_SHARED, ctx.rank, MPI_INFO_NULL, &ctx.node));
  MPSB_MPI(MPI_Comm_set_errhandler(ctx.node, MPI_ERRORS_RETURN));
  MPSB_MPI(MPI_Comm_rank(ctx.node, &ctx.local_rank));
  MPSB_MPI(MPI_Comm_size(ctx.node, &ctx.local_size));
  const int mine[2] = {ctx.rank, static_cast<int>(::getpid())};
  std::vector<int> all(2 * static_cast<std::size_t>(ctx.local_size));
  MPSB_MPI(MPI_Allgather(mine, 2, MPI_INT, all.data(), 2, MPI_INT, ctx.node));
  std::vector<NodePeer> peers;
  for (std::size_t i = 0; i + 1 < all.size(); i += 2) peers.push_back({all[i], static_cast<pid_t>(all[i + 1])});
  set_node_peers(std::move(peers));
  return ctx;
}

void free_mpi_context(MpiContext& ctx) {
  if (ctx.node != MPI_COMM_NULL) MPI_Comm_free(&ctx.node);
}

std::vector<std::string> allgather_strings(MPI_Comm comm, const std::string& mine) {
  int size = 0;
  MPSB_MPI(MPI_Comm_size(comm, &size));
  const int my_count = static_cast<int>(mine.size());
  std::vector<int> counts(static_cast<std::size_t>(size));
  MPSB_MPI(MPI_Allgather(&my_count, 1, MPI_INT, counts.data(), 1, MPI_INT, comm));
  std::size_t total = 0;
  const auto displs = displacements(counts, &total);
  std::vector<char> data(total + 1);
  MPSB_MPI(MPI_Allgatherv(mine.data(), my_count, MPI_CHAR, data.data(), counts.data(), displs.data(), MPI_CHAR,
                          comm));
  return split_by_counts(data, counts, displs);
}

std::vector<std::string> gather_strings(MPI_Comm comm, const std::string& mine, int root) {
  int size = 0, rank = 0;
  MPSB_MPI(MPI_Comm_size(comm, &size));
  MPSB_MPI(MPI_Comm_rank(comm, &rank));
  const int my_count = static_cast<int>(mine.size());
  std::vector<int> counts(static_cast<std::size_t>(size));
  MPSB_MPI(MPI_Gather(&my_count, 1, MPI_INT, counts.data(), 1, MPI_INT, root, comm));
  std::size_t total = 0;
  const auto displs = displacements(counts, &total);
  std::vector<char> data(total + 1);
  MPSB_MPI(MPI_Gatherv(mine.data(), my_count, MPI_CHAR, data.data(), counts.data(), displs.data(), MPI_CHAR, root,
                       comm));
  if (rank != root) return {};
  return split_by_counts(data, counts, displs);
}

void wait_asleep(MPI_Request& request) {
  int done = 0;
  while (true) {
    MPSB_MPI(MPI_Test(&request, &done, MPI_STATUS_IGNORE));
    if (done) return;
    std::this_thread::sleep_for(std::chrono::microseconds(500));
  }
}

void quiet_barrier(MPI_Comm comm) {
  MPI_Request request = MPI_REQUEST_NULL;
  MPSB_MPI(MPI_Ibarrier(comm, &request));
  wait_asleep(request);
}

std::string mpi_library_version() {
  char text[MPI_MAX_LIBRARY_VERSION_STRING] = {};
  int length = 0;
  MPSB_MPI(MPI_Get_library_version(text, &length));
  std::string version(text, static_cast<std::size_t>(length));
  while (!version.empty() && (version.back() == '\n' || version.back() == '\0')) version.pop_back();
  return version;
}

}  // namespace mpsb
