// GPM figures are percentages: what a source gives outside 0-100 (or not a number) is a broken counter,
// and mpsbench's analysis refuses a file that holds one. Both writers of GPM figures (mpsbench's records
// through measure/gpu_watch.cpp, and mpsbench-meter) read them through GpuCounters::gpm_figures, so the
// check is made once, here, for NVML and the scripted fake alike.
#include <cmath>
#include <cstdio>
#include <optional>
#include <string>
#include <utility>

#include "telemetry/gpu_counters.hpp"

namespace mpsb {

bool check_gpm_figures(GpmFigures& f, std::string& why) {
  const std::pair<const char*, const std::optional<double>*> figures[4] = {
      {"SM active", &f.sm_active}, {"SM occupancy", &f.sm_occupancy}, {"DRAM bandwidth", &f.dram_bw},
      {"tensor active", &f.tensor_active}};
  std::string broken;
  for (const auto& [name, value] : figures) {
    if (!*value || (std::isfinite(**value) && **value >= 0.0 && **value <= 100.0)) continue;
    char text[96];
    std::snprintf(text, sizeof text, "%s %.6g%%", name, **value);
    broken += (broken.empty() ? "" : ", ") + std::string(text);
  }
  if (broken.empty()) return true;
  why += (why.empty() ? "" : "; ") + std::string("GPM gave ") + broken +
         ", outside 0-100%: a broken counter, so no figure of these samples is used";
  f = GpmFigures{};
  return false;
}

GpmFigures GpuCounters::gpm_figures(const GpmSample& first, const GpmSample& second, std::string& why) {
  GpmFigures f = read_gpm_figures(first, second, why);
  check_gpm_figures(f, why);
  return f;
}

}  // namespace mpsb
