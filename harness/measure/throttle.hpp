// What counts as a throttled repetition: NVML's clock event reason bits
// (nvmlClocksEventReason*, formerly ...ThrottleReason*) and the SM clock of
// the samples taken during the repetition. Pure functions, no NVML: the
// sampler (gpu_clocks.hpp) fills a ClockWindow and these judge it.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace mpsb {

// The bit values of nvml.h (stable across NVML versions; gpu_clocks.cpp
// checks them against the header when it has one).
namespace clock_event {
inline constexpr std::uint64_t kGpuIdle = 0x1;
inline constexpr std::uint64_t kApplicationsClocks = 0x2;
inline constexpr std::uint64_t kSwPowerCap = 0x4;
inline constexpr std::uint64_t kHwSlowdown = 0x8;
inline constexpr std::uint64_t kSyncBoost = 0x10;
inline constexpr std::uint64_t kSwThermal = 0x20;
inline constexpr std::uint64_t kHwThermal = 0x40;
inline constexpr std::uint64_t kHwPowerBrake = 0x80;
inline constexpr std::uint64_t kDisplayClock = 0x100;
// Events that slow the SMs below what the work asks for. Not among them: idle
// (nothing ran), an applications-clocks setting or display clock (chosen by
// the administrator, constant), sync boost (a group of GPUs boosting together).
inline constexpr std::uint64_t kSlowing = kSwPowerCap | kHwSlowdown | kSwThermal | kHwThermal | kHwPowerBrake;
}  // namespace clock_event

// Readable names in bit order: "gpu_idle", "applications_clocks",
// "sw_power_cap", "hw_slowdown", "sync_boost", "sw_thermal", "hw_thermal",
// "hw_power_brake", "display_clock"; any other bit "bit_N" (N from 0).
std::vector<std::string> clock_event_names(std::uint64_t events);
bool has_slowing_event(std::uint64_t events);

// What one GPU's sampler saw during one repetition.
struct ClockWindow {
  int samples = 0;                  // samples whose SM clock was read
  int missing = 0;                  // samples an NVML call failed for
  std::optional<double> mean_mhz;   // SM clock over the samples taken while the GPU was not idle
  std::optional<double> min_mhz;    // likewise
  std::optional<double> max_mhz;    // likewise
  std::uint64_t events = 0;         // OR of every sample's event reasons
};

// Throttled: a slowing event during the window, or a mean SM clock below
// `threshold` (a fraction) x `reference_mhz`. Without a reference or a busy
// sample only the events count.
bool repetition_affected(const ClockWindow& window, std::optional<double> reference_mhz, double threshold);

}  // namespace mpsb
