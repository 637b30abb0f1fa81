// One instance's measurement of one configuration: its untimed setup (or the
// workload kept from the previous configuration), the calibration and warm-up
// it joins, the metered stretch, its timed repetitions and its verification
// after timing.
#pragma once

#include <cstdint>

#include "measure/cpu_watch.hpp"
#include "measure/gpu_watch.hpp"
#include "measure/instance_cache.hpp"
#include "measure/placement.hpp"
#include "measure/plan.hpp"
#include "measure/samples.hpp"
#include "measure/settings.hpp"
#include "measure/team.hpp"
#include "sharing/green_context.hpp"

namespace mpsb {

// Instance `instance` of world rank `rank` in `team`; `config_index` is 1-based.
struct InstanceRun {
  Team& team;
  int instance = 0;
  const Placement& placement;
  const Config& config;
  int config_index = 1;
  const MeasureSettings& settings;
  int rank = 0;
  std::int64_t* iterations = nullptr;          // instance 0 writes the calibrated count here
  const GreenPartition* partition = nullptr;   // --mode green's split of the GPU, else nullptr
  CachedInstance* kept = nullptr;              // where its workload is kept between configurations; nullptr: not kept
  JobMonitor* monitor = nullptr;               // its GPU's monitor, on the instance that watches the GPU only
  CpuWatch* cpu = nullptr;                     // its CPU watch, kept by the job (cpu_watch.hpp)
};

// Out of memory in setup comes back as the samples' error (every instance then skips timing); any other
// error throws.
RankSamples run_instance(const InstanceRun& run);

}  // namespace mpsb
