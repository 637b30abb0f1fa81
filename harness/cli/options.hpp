// Command-line options: parsed and validated before any MPI communication or
// GPU work, so every rank reaches the same verdict on the same argv. Each
// option is one row of the option table (option_table.hpp); its value lands
// in the part of Options that the code using it takes as it is.
#pragma once

#include <string>
#include <vector>

#include "measure/plan.hpp"
#include "measure/settings.hpp"
#include "sharing/mode_table.hpp"
#include "sharing/mps_servers.hpp"

namespace mpsb {

enum class DeviceChoice { automatic, gpu, cpu };

struct Options {
  PlanRequest plan;         // what to run: --kernel, --precision, --size, --ranks-per-gpu, --param, --mix
  MeasureSettings measure;  // how each configuration is timed: --min-time ... --allreduce
  // Where it runs and how its ranks share a GPU.
  DeviceChoice device = DeviceChoice::automatic;
  SharingMode mode = SharingMode::automatic;
  // --gpus items as given: CUDA device indices ("1") or GPU-/MIG- UUIDs; empty: all visible GPUs
  std::vector<std::string> gpus;
  OtherMpsUsers other_mps_users = OtherMpsUsers::refuse;
  // Its files and deadline.
  std::string output;     // empty: a fresh default name
  std::string resume;     // results file to continue; empty: none
  double timeout_s = 600;  // per configuration; 0: none
  std::string turns;      // the sweep's socket to take turns at (--turns); empty: none
  // What to print instead of measuring.
  bool show_help = false;
  bool show_version = false;
  bool list_kernels = false;
  bool list_presets = false;
  bool list_modes = false;

  bool prints_only() const { return show_help || show_version || list_kernels || list_presets || list_modes; }
};

// `--precision all`: every precision of each kernel.
inline const char* const kAllPrecisions = "all";

// Throws UsageError naming the offending value. Expands --preset first.
Options parse_options(const std::vector<std::string>& args);
// --help (usage.cpp).
std::string usage_text();
const char* to_string(DeviceChoice choice);

}  // namespace mpsb
