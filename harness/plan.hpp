// The sweep: kernels x precisions x sizes x active ranks per GPU, in suite
// order, and the preflight checks that reject a plan before any work.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "options.hpp"
#include "placement.hpp"

namespace mpsb {

struct Config {
  std::string kernel;
  std::string precision;
  std::int64_t size = 0;
  int ranks_per_gpu = 1;
};

// 1, 2, 4, ... below max, then max itself.
std::vector<int> default_rank_counts(int max_ranks_per_device);

// Most instances one rank runs in --mode streams.
inline constexpr int kMaxStreamInstances = 64;

// Throws UsageError for rank counts above what exists (in streams mode: above
// kMaxStreamInstances, since one rank runs all instances).
std::vector<Config> build_plan(const Options& options, DeviceKind device, int max_ranks_per_device,
                               int device_count);

// Throws UsageError when the buffers of one rank of some configuration cannot
// fit in the free memory of its GPU (that size is bad input). Returns one
// line for each configuration whose k active ranks together may not fit: it
// still runs, and an allocation failure records it as failed (measure.cpp)
// while the sweep goes on, so the smaller rank counts are not lost.
std::vector<std::string> preflight_memory(const std::vector<Config>& plan, const Placement& placement);

std::string format_bytes(double bytes);  // "1.50 GiB"

}  // namespace mpsb
