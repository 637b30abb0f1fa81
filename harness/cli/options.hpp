// Command-line options: parsed and validated before any MPI communication or
// GPU work, so every rank reaches the same verdict on the same argv.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include "measure/plan.hpp"
#include "runtime/values.hpp"
#include "sharing/mps_servers.hpp"
#include "sharing/mode_table.hpp"

namespace mpsb {

enum class DeviceChoice { automatic, gpu, cpu };

struct Options {
  PlanRequest plan;  // --kernel, --precision, --size, --ranks-per-gpu, --param, --mix
  DeviceChoice device = DeviceChoice::automatic;
  SharingMode mode = SharingMode::automatic;
  // --gpus items as given: CUDA device indices ("1") or GPU-/MIG- UUIDs; empty: all visible GPUs
  std::vector<std::string> gpus;
  OtherMpsUsers other_mps_users = OtherMpsUsers::refuse;      // --other-mps-users
  double min_time_s = 0.25;
  int repetitions = 5;                                         // the minimum with --max-noise
  double warmup_time_s = 0.2;                                  // --warmup-time
  std::optional<double> max_noise;                             // --max-noise as a fraction
  std::optional<double> max_time_s;                            // --max-time; 10 s once --max-noise is given
  bool discard_throttled = false;
  int throttle_retries = 3;
  double clock_threshold = 0.9;                                // --clock-threshold as a fraction
  std::uint64_t seed = 1;
  std::string output;                                          // empty: a fresh default name
  double timeout_s = 600;                                      // per configuration; 0: none
  std::string resume;                                          // results file to continue; empty: none
  std::optional<std::int64_t> allreduce_bytes;                 // --allreduce: a host MPI_Allreduce per iteration
  bool show_help = false;
  bool show_version = false;
  bool list_kernels = false;
  bool list_presets = false;
  bool list_modes = false;
};

// `--precision all`: every precision of each kernel.
inline const char* const kAllPrecisions = "all";

// Throws UsageError naming the offending value. Expands --preset first.
Options parse_options(const std::vector<std::string>& args);
std::string usage_text();
const char* to_string(DeviceChoice choice);

}  // namespace mpsb
