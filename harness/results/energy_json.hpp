// The JSON of a result's `energy` and `gpu_activity` (schema definitions
// energy and gpu_activity; mpsbench-meter prints the same objects).
#pragma once

#include <nlohmann/json.hpp>

#include "results/energy_record.hpp"

namespace mpsb {

nlohmann::ordered_json energy_json(const EnergyRecord& e);
nlohmann::ordered_json activity_json(const ActivityRecord& a);
// One GPU's, as per_gpu lists them (and mpsbench-meter's "gpus").
nlohmann::ordered_json gpu_energy_json(const GpuTelemetry& g);
nlohmann::ordered_json gpu_activity_json(const GpuTelemetry& g);

}  // namespace mpsb
