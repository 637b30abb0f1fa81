// The measurement protocol for one configuration (README "Measurement
// protocol"): untimed setup, warm-up, one calibrated iteration count for all
// active instances, then repetitions of barrier / start / iterations / sync /
// end, with CUDA-event GPU time per instance, and verification after timing.
// An instance is one workload: one per active rank in the process modes, k
// per rank (threads and streams of one process) in --mode streams.
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

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

// One instance's view of one configuration; times on rank 0's clock.
struct RankSamples {
  int rank = 0;
  int instance = 0;
  std::vector<double> start_s, end_s;  // per repetition
  std::vector<double> gpu_s;           // CUDA-event time per repetition; empty on the CPU
  Work work;
  Verification verification;
  std::vector<std::pair<std::string, double>> details;  // Workload::details()
  std::string error;  // non-empty: the configuration failed (out of memory); no samples then
};

struct ConfigSamples {
  Config config;
  int instances_per_rank = 1;
  std::int64_t iterations = 0;     // per repetition, the same on every instance
  std::vector<RankSamples> ranks;  // every instance, in (rank, instance) order
  std::string error;               // the instances' errors joined; non-empty: the configuration failed
};

// Collective over ctx.world (inactive ranks only wait). `instances_per_rank`
// workloads run on each active rank. The samples are complete on rank 0 and
// empty elsewhere. An out-of-memory error in any instance's setup makes every
// instance skip timing (they agree after setup), and the samples carry the
// error instead; any other error aborts the job. `config_index` is 1-based.
ConfigSamples measure_config(const MpiContext& ctx, const Placement& placement, const Config& config,
                             int config_index, const MeasureSettings& settings, int active_slots,
                             int instances_per_rank, double clock_offset_s);

std::string serialize(const RankSamples& samples);
RankSamples deserialize_samples(const std::string& text);

}  // namespace mpsb
