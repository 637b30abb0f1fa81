#include "sharing/gpu_contexts.hpp"

#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <sstream>

#include "runtime/check.hpp"
#include "runtime/usage_error.hpp"
#include "sharing/mps_memory_limit.hpp"
#include "sharing/sharing_state.hpp"

namespace mpsb {
namespace {

// read_sharing_state's check of the variable, without a device.
class EnvironmentOnlyProbe final : public MpsProbe {
 public:
  bool mps_enabled(int) const override { return false; }
  int sm_count(int) const override { return 0; }
  std::optional<std::string> environment(const char* name) const override {
    const char* value = std::getenv(name);
    if (value == nullptr) return std::nullopt;
    return std::string(value);
  }
};

struct ContextRecord {
  std::string uuid;
  int turn = 0;
  std::uint64_t free_after = 0;
};

}  // namespace

void check_thread_percentage_everywhere(const MpiContext& ctx) {
  std::string problem;
  try {
    const EnvironmentOnlyProbe environment;
    read_sharing_state(environment, 0);
    if (const auto limits = environment.environment(kPinnedMemLimitVariable)) parse_pinned_mem_limits(*limits);
  } catch (const UsageError& e) {
    problem = e.what();
  }
  const auto problems = allgather_strings(ctx.world, problem);
  const auto hosts = allgather_strings(ctx.world, ctx.host);
  for (int r = 0; r < ctx.size; ++r) {
    if (!problems[r].empty()) {
      throw UsageError("rank " + std::to_string(r) + " on " + hosts[r] + ": " + problems[r]);
    }
  }
}

std::vector<MpsProcess> check_other_mps_users_everywhere(const MpiContext& ctx, OtherMpsUsers policy) {
  std::string mine;
  if (ctx.local_rank == 0) {
    mine = serialize_mps_processes(of_other_users(find_mps_processes(proc_root_from_environment()), getuid()));
  }
  const auto found = allgather_strings(ctx.world, mine);
  const auto hosts = allgather_strings(ctx.world, ctx.host);
  std::vector<MpsProcess> others;
  for (int r = 0; r < ctx.size; ++r) {
    for (auto& p : deserialize_mps_processes(found[static_cast<std::size_t>(r)], hosts[static_cast<std::size_t>(r)])) {
      others.push_back(std::move(p));
    }
  }
  const std::string warning = decide_other_mps_users(policy, others);  // refuse: throws on every rank
  if (ctx.rank == 0 && !warning.empty()) {
    std::fprintf(stderr, "mpsbench: warning: %s\n", warning.c_str());
    std::fflush(stderr);
  }
  return others;
}

GpuInfo open_gpus_in_turn(const MpiContext& ctx, const std::vector<int>& usable) {
  const int gpus = static_cast<int>(usable.size());
  const int my_turn = ctx.local_rank / gpus;  // my slot on my GPU
  int turns = my_turn + 1;
  MPSB_MPI(MPI_Allreduce(MPI_IN_PLACE, &turns, 1, MPI_INT, MPI_MAX, ctx.node));
  GpuInfo gpu;
  for (int turn = 0; turn < turns; ++turn) {
    if (turn == my_turn) gpu = open_gpu(usable[static_cast<std::size_t>(ctx.local_rank % gpus)]);
    MPSB_MPI(MPI_Barrier(ctx.node));
  }

  std::ostringstream mine;
  mine << gpu.uuid << ' ' << my_turn << ' ' << gpu.memory_free_bytes;
  std::vector<ContextRecord> records;
  for (const auto& text : allgather_strings(ctx.node, mine.str())) {
    ContextRecord r;
    std::istringstream in(text);
    in >> r.uuid >> r.turn >> r.free_after;
    records.push_back(r);
  }
  // The context created just before mine on my GPU: the latest earlier turn,
  // and only if one rank of my GPU took that turn (and none shared mine).
  int previous_turn = -1, sharing_my_turn = 0;
  for (const auto& r : records) {
    if (r.uuid != gpu.uuid) continue;
    if (r.turn == my_turn) ++sharing_my_turn;
    if (r.turn < my_turn && r.turn > previous_turn) previous_turn = r.turn;
  }
  int in_previous_turn = 0;
  std::uint64_t previous_free = 0;
  for (const auto& r : records) {
    if (r.uuid == gpu.uuid && r.turn == previous_turn) {
      ++in_previous_turn;
      previous_free = r.free_after;
    }
  }
  if (previous_turn >= 0 && in_previous_turn == 1 && sharing_my_turn == 1 &&
      previous_free >= gpu.memory_free_bytes) {
    gpu.context_memory_bytes = previous_free - gpu.memory_free_bytes;
  }
  return gpu;
}

}  // namespace mpsb
