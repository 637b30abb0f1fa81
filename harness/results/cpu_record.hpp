// A result's host CPUs during its kept repetitions (schema definitions.cpu):
// the CPU probe's largest ratio per repetition, which repetitions were
// CPU-slowed and how many were retaken, the steal and run-queue time, and the
// probe's reference (measure/cpu_watch.hpp). Lists of figures that some timed
// thread could not read are absent (JSON null) with the reason in the note.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "measure/samples.hpp"
#include "measure/settings.hpp"

namespace mpsb {

struct CpuRecord {
  std::string probe;                   // what the probe runs (cpu_probe_name)
  double threshold = 0.3;              // settings.cpu_threshold
  std::optional<double> reference_s;   // the fastest probe of the first active rank's threads
  int slowed_repetitions = 0;          // of the kept ones
  int discarded_repetitions = 0;
  std::vector<bool> repetition_slowed;  // per kept repetition
  std::vector<double> probe_ratio;      // likewise
  std::optional<std::vector<double>> steal_s, run_delay_s;  // likewise; nullopt: unreadable somewhere
  std::string note;                     // what could not be read, on any instance
};

// From the instances' samples; nullopt where none watched its CPU (samples made by hand in tests).
std::optional<CpuRecord> cpu_record(const ConfigSamples& samples, const MeasureSettings& settings);

nlohmann::ordered_json cpu_json(const CpuRecord& c);

}  // namespace mpsb
