// The measurement protocol for one configuration (README "Measurement
// protocol"): untimed setup, warm-up, one calibrated iteration count for all
// active ranks, then repetitions of barrier / start / iterations / sync / end,
// with CUDA-event GPU time per rank, and verification after timing.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include <cuda_runtime_api.h>

#include "mpi_context.hpp"
#include "placement.hpp"
#include "plan.hpp"
#include "workload.hpp"

namespace mpsb {

struct MeasureSettings {
  double min_time_s = 0.25;
  int repetitions = 5;
  std::uint64_t seed = 1;
};

// One active rank's view of one configuration; times on rank 0's clock.
struct RankSamples {
  int rank = 0;
  std::vector<double> start_s, end_s;  // per repetition
  std::vector<double> gpu_s;           // CUDA-event time per repetition; empty on the CPU
  Work work;
  Verification verification;
  std::vector<std::pair<std::string, double>> details;  // Workload::details()
};

struct ConfigSamples {
  Config config;
  std::int64_t iterations = 0;     // per repetition, the same on every active rank
  std::vector<RankSamples> ranks;  // active ranks in world-rank order
};

// Collective over ctx.world (inactive ranks only wait). The samples are
// complete on rank 0 and empty elsewhere.
ConfigSamples measure_config(const MpiContext& ctx, const Placement& placement, const Config& config,
                             const MeasureSettings& settings, cudaStream_t stream, double clock_offset_s);

std::string serialize(const RankSamples& samples);
RankSamples deserialize_samples(const std::string& text);

}  // namespace mpsb
