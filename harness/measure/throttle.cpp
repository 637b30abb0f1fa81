#include "measure/throttle.hpp"

namespace mpsb {

std::vector<std::string> clock_event_names(std::uint64_t events) {
  std::vector<std::string> names;
  for (int bit = 0; bit < 64; ++bit) {
    const std::uint64_t mask = std::uint64_t{1} << bit;
    if ((events & mask) == 0) continue;
    switch (mask) {
      case clock_event::kGpuIdle: names.emplace_back("gpu_idle"); break;
      case clock_event::kApplicationsClocks: names.emplace_back("applications_clocks"); break;
      case clock_event::kSwPowerCap: names.emplace_back("sw_power_cap"); break;
      case clock_event::kHwSlowdown: names.emplace_back("hw_slowdown"); break;
      case clock_event::kSyncBoost: names.emplace_back("sync_boost"); break;
      case clock_event::kSwThermal: names.emplace_back("sw_thermal"); break;
      case clock_event::kHwThermal: names.emplace_back("hw_thermal"); break;
      case clock_event::kHwPowerBrake: names.emplace_back("hw_power_brake"); break;
      case clock_event::kDisplayClock: names.emplace_back("display_clock"); break;
      default: names.push_back("bit_" + std::to_string(bit));
    }
  }
  return names;
}

bool has_slowing_event(std::uint64_t events) { return (events & clock_event::kSlowing) != 0; }

bool repetition_affected(const ClockWindow& window, std::optional<double> reference_mhz, double threshold) {
  if (has_slowing_event(window.events)) return true;
  if (!reference_mhz || *reference_mhz <= 0 || !window.mean_mhz) return false;
  return *window.mean_mhz < threshold * *reference_mhz;
}

}  // namespace mpsb
