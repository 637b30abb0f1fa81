// Where a job's time went, in words for the console's last lines (issue 28):
// one line for the whole job, then one row per kernel, from the results'
// timing and the job's (measure/timing.hpp). Measurement is the timed windows
// and the warm-up; everything else is outside.
#pragma once

#include <string>
#include <utility>
#include <vector>

#include "measure/timing.hpp"

namespace mpsb {

// (kernel, its configuration's timing), in plan order.
using KernelTimings = std::vector<std::pair<std::string, ConfigTiming>>;

// "time: 112.3 s in all; windows 40.1 s, warm-up 22.0 s, outside 50.2 s (44.7%): start-up 3.1 s, setup ..."
std::string time_summary_line(const KernelTimings& configs, const JobTiming& job);
// The per-kernel table, a header line and one line per kernel, each ending in '\n'.
std::string time_by_kernel(const KernelTimings& configs);

}  // namespace mpsb
