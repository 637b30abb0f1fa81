#include "measure/preflight.hpp"

#include <algorithm>

#include "registry.hpp"
#include "runtime/check.hpp"
#include "runtime/usage_error.hpp"
#include "sharing/green_context.hpp"

namespace mpsb {

void verify_placement_sharing(SharingMode mode, const Placement& placement) {
  std::vector<RankSharing> sharing;
  for (const auto& r : placement.ranks) {
    sharing.push_back(RankSharing{
        r.rank, r.host, SharingState{r.gpu.mps_enabled, r.gpu.sm_count, r.gpu.mps_active_thread_percentage}});
  }
  verify_sharing_state(mode, sharing);
}

std::vector<RankMemoryLimit> pinned_mem_limits(const Placement& placement) {
  std::vector<RankMemoryLimit> out;
  for (const auto& r : placement.ranks) {
    out.push_back(RankMemoryLimit{r.rank, r.host, r.gpu.index, r.gpu.mps_pinned_mem_limit_bytes, r.gpu.memory_free_bytes});
  }
  return out;
}

void check_green_partitions(const MpiContext& ctx, const Placement& placement, const std::vector<Config>& plan) {
  if (placement.kind != DeviceKind::gpu) {
    throw UsageError("--mode green: CUDA green contexts need the GPU, but --device auto found none usable");
  }
  std::vector<int> counts;
  for (const auto& c : plan) {
    if (std::find(counts.begin(), counts.end(), c.ranks_per_gpu) == counts.end()) counts.push_back(c.ranks_per_gpu);
  }
  std::sort(counts.begin(), counts.end());
  std::string problem;
  const RankPlacement& mine = placement.ranks[static_cast<std::size_t>(ctx.rank)];
  if (mine.slot == 0) {  // the rank that runs the instances of its GPU
    try {
      MPSB_CUDA(cudaSetDevice(mine.gpu.index));
      for (const int k : counts) {
        const GreenPartition partition(mine.gpu.index, k);
        const GreenContext probe(partition, 0);  // created, made current, destroyed
      }
    } catch (const FatalError& e) {
      problem = e.what();
    }
  }
  for (const auto& p : allgather_strings(ctx.world, problem)) {
    if (!p.empty()) throw UsageError("--mode green: " + p);
  }
}

std::vector<std::string> preflight_memory(const std::vector<Config>& plan, const Placement& placement) {
  std::vector<std::string> tight;
  if (placement.kind != DeviceKind::gpu || placement.ranks.empty()) return tight;
  // Every GPU runs the same k active ranks, so the smallest free memory any
  // rank saw (after every context existed) decides for all of them.
  const RankPlacement& r = *std::min_element(
      placement.ranks.begin(), placement.ranks.end(),
      [](const RankPlacement& a, const RankPlacement& b) { return a.gpu.memory_free_bytes < b.gpu.memory_free_bytes; });
  const auto free_bytes = static_cast<double>(r.gpu.memory_free_bytes);
  const std::string gpu =
      "GPU " + std::to_string(r.gpu.index) + " on " + r.host + " has " + format_bytes(free_bytes) + " free";
  for (const auto& c : plan) {
    if (c.is_mix()) continue;  // its tenants are checked alone at the mix's total
    const KernelInfo* k = find_kernel(c.kernel);
    const double per_rank = k->device_bytes(c.precision, c.size, c.params);
    const double needed = per_rank * c.ranks_per_gpu;
    if (needed <= free_bytes) continue;
    const std::string what = c.kernel + " " + c.precision + " size " + std::to_string(c.size);
    if (per_rank > free_bytes && r.gpu.mps_pinned_mem_limit_bytes) {
      // An MPS client's free memory is what its pinned limit leaves: a size over it is what a memory-limit
      // sweep measures, so it runs and fails as one recorded configuration (the error names the limit).
      tight.push_back(what + " needs " + format_bytes(per_rank) + " per rank, over the MPS pinned device memory "
                      "limit of " + format_bytes(static_cast<double>(*r.gpu.mps_pinned_mem_limit_bytes)) + " (" +
                      gpu + "): it runs, and is recorded as failed when an allocation fails");
      continue;
    }
    if (per_rank > free_bytes) {
      throw UsageError(what + " needs " + format_bytes(per_rank) + " per rank, but " + gpu);
    }
    tight.push_back(what + " with " + std::to_string(c.ranks_per_gpu) + " ranks per GPU needs " +
                    std::to_string(c.ranks_per_gpu) + " x " + format_bytes(per_rank) + " = " + format_bytes(needed) +
                    ", but " + gpu + ": it runs, and is recorded as failed if an allocation fails");
  }
  return tight;
}

}  // namespace mpsb
