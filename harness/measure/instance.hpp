// One instance's measurement of one configuration: its untimed setup, the
// calibration and warm-up it joins, its timed repetitions and its
// verification after timing.
#pragma once

#include <cstdint>

#include "measure/placement.hpp"
#include "measure/plan.hpp"
#include "measure/samples.hpp"
#include "measure/settings.hpp"
#include "measure/team.hpp"
#include "sharing/green_context.hpp"

namespace mpsb {

// Instance `instance` of world rank `rank` in `team`; `config_index` is
// 1-based. Writes the calibrated count to *iterations on instance 0.
// `partition`: --mode green's split of the GPU, else nullptr. Out of memory in
// setup comes back as the samples' error (every instance then skips timing);
// any other error throws.
RankSamples run_instance(Team& team, int instance, const Placement& placement, const Config& config,
                         int config_index, const MeasureSettings& settings, int rank, std::int64_t* iterations,
                         const GreenPartition* partition);

}  // namespace mpsb
