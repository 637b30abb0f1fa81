// A result's energy and GPU activity (issue 27), from each GPU's telemetry
// over the configuration's metered span (measure/gpu_watch.hpp): joules over
// the kept repetitions and every GPU of the run (each GPU's mean power x the
// kept window time, summed), per unit of the primary metric's work, and the
// GPM figures (percent) as the mean over the GPUs, each GPU's kept. Where a
// figure cannot be had it is unavailable with the reason, never a zero.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "measure/samples.hpp"
#include "workload.hpp"

namespace mpsb {

struct EnergyRecord {
  bool available = false;
  std::string reason;         // why not, when not
  double joules = 0;          // over the kept repetitions, every GPU
  double joules_per_unit = 0;
  std::string unit;           // "J/FLOP", "J/B", "J/request", ...
  double mean_power_w = 0;    // summed over the GPUs
  double span_s = 0;          // the shortest GPU's metered span
  double uncertainty = 0;     // relative, of joules (the GPUs' uncertainties weighted by their joules)
  std::string method;
  std::vector<GpuTelemetry> per_gpu;
};

struct ActivityRecord {
  bool available = false;
  std::string reason;
  GpmFigures mean;  // over the GPUs that have each figure
  std::vector<GpuTelemetry> per_gpu;
};

// `windows_s`: the kept windows; `work`: the primary metric's work over all of them; `work_unit`:
// "FLOP", "B", "request", ...; `cpu_device`: no GPU ran (unless a test's fake was metered).
EnergyRecord energy_record(const std::vector<GpuTelemetry>& gpus, const std::vector<double>& windows_s,
                           double work, const std::string& work_unit, bool cpu_device);
ActivityRecord activity_record(const std::vector<GpuTelemetry>& gpus, bool cpu_device);
// Both unavailable for a configuration that measured nothing.
EnergyRecord failed_energy_record();
ActivityRecord failed_activity_record();

// The GPUs' telemetry among a configuration's samples, in (rank, instance) order.
std::vector<GpuTelemetry> telemetry_of(const ConfigSamples& samples);

}  // namespace mpsb
