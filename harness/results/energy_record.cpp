#include "results/energy_record.hpp"

#include <algorithm>
#include <numeric>

namespace mpsb {
namespace {

constexpr const char* kCpuDevice = "cpu device";
constexpr const char* kNoGpu = "no GPU was watched";
constexpr const char* kFailed = "the configuration failed: nothing was measured";

// "GPU 0 on host: why" for the first GPU that lacks a figure.
std::string first_reason(const std::vector<GpuTelemetry>& gpus, bool GpuTelemetry::*available,
                         std::string GpuTelemetry::*reason) {
  for (const auto& g : gpus) {
    if (!(g.*available)) return "GPU " + std::to_string(g.gpu_index) + " on " + g.host + ": " + g.*reason;
  }
  return "";
}

std::optional<double> mean_of(const std::vector<GpuTelemetry>& gpus, std::optional<double> GpmFigures::*figure) {
  double sum = 0;
  int count = 0;
  for (const auto& g : gpus) {
    if (!g.activity_available || !(g.activity.*figure)) continue;
    sum += *(g.activity.*figure);
    ++count;
  }
  if (count == 0) return std::nullopt;
  return sum / count;
}

}  // namespace

std::vector<GpuTelemetry> telemetry_of(const ConfigSamples& samples) {
  std::vector<GpuTelemetry> gpus;
  for (const auto& s : samples.ranks) {
    if (s.telemetry) gpus.push_back(*s.telemetry);
  }
  return gpus;
}

EnergyRecord energy_record(const std::vector<GpuTelemetry>& gpus, const std::vector<double>& windows_s,
                           double work, const std::string& work_unit, bool cpu_device) {
  EnergyRecord e;
  e.per_gpu = gpus;
  if (gpus.empty()) {
    e.reason = cpu_device ? kCpuDevice : kNoGpu;
    return e;
  }
  e.reason = first_reason(gpus, &GpuTelemetry::energy_available, &GpuTelemetry::energy_reason);
  if (!e.reason.empty()) return e;
  const double kept_s = std::accumulate(windows_s.begin(), windows_s.end(), 0.0);
  double weighted = 0;
  bool extended = false;
  e.span_s = gpus.front().energy_span_s;
  for (const auto& g : gpus) {
    const double joules = g.mean_power_w * kept_s;
    e.mean_power_w += g.mean_power_w;
    e.joules += joules;
    weighted += g.energy_uncertainty * joules;
    e.span_s = std::min(e.span_s, g.energy_span_s);
    extended = extended || g.energy_extended;
  }
  if (!(work > 0) || !(kept_s > 0)) {
    e.reason = "no work was measured to divide the energy by";
    return e;
  }
  e.available = true;
  e.reason.clear();
  e.joules_per_unit = e.joules / work;
  e.unit = "J/" + work_unit;
  e.uncertainty = e.joules > 0 ? weighted / e.joules : 0;
  e.method = extended ? "nvml_energy_counter: mean power between counter updates in the warm-up's last batches "
                        "and the kept repetitions (fewer than two updates in the repetitions alone), times the "
                        "kept window time"
                      : "nvml_energy_counter: mean power between counter updates inside the metered span, times "
                        "the kept window time";
  return e;
}

ActivityRecord activity_record(const std::vector<GpuTelemetry>& gpus, bool cpu_device) {
  ActivityRecord a;
  a.per_gpu = gpus;
  if (gpus.empty()) {
    a.reason = cpu_device ? kCpuDevice : kNoGpu;
    return a;
  }
  a.reason = first_reason(gpus, &GpuTelemetry::activity_available, &GpuTelemetry::activity_reason);
  if (!a.reason.empty()) return a;
  a.mean = GpmFigures{mean_of(gpus, &GpmFigures::sm_active), mean_of(gpus, &GpmFigures::sm_occupancy),
                      mean_of(gpus, &GpmFigures::dram_bw), mean_of(gpus, &GpmFigures::tensor_active)};
  a.available = true;
  // A figure some GPU lacked: the others' mean stands, the reason says which is missing.
  for (const auto& g : gpus) {
    if (!g.activity_reason.empty() && a.reason.find(g.activity_reason) == std::string::npos) {
      a.reason += (a.reason.empty() ? "" : "; ") + g.activity_reason;
    }
  }
  return a;
}

EnergyRecord failed_energy_record() {
  EnergyRecord e;
  e.reason = kFailed;
  return e;
}

ActivityRecord failed_activity_record() {
  ActivityRecord a;
  a.reason = kFailed;
  return a;
}

}  // namespace mpsb
