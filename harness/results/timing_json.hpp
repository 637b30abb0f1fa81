// The JSON of where the time went (measure/timing.hpp): a result's `timing`
// and the context's, in seconds (schema definitions timing, job_timing).
#pragma once

#include <nlohmann/json.hpp>

#include "measure/timing.hpp"

namespace mpsb {

nlohmann::ordered_json timing_json(const ConfigTiming& t);
nlohmann::ordered_json job_timing_json(const JobTiming& t);

}  // namespace mpsb
