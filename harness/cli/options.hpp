// Command-line options: parsed and validated before any MPI communication or
// GPU work, so every rank reaches the same verdict on the same argv.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include "runtime/values.hpp"
#include "sharing/mps_servers.hpp"
#include "sharing/sharing_state.hpp"

namespace mpsb {

enum class DeviceChoice { automatic, gpu, cpu };

// One tenant of --mix: KERNEL[/PRECISION[/SIZE]]:RANKS. An empty precision or
// a zero size means the kernel's default (filled in by the plan).
struct Tenant {
  std::string kernel;
  std::string precision;
  std::int64_t size = 0;
  int ranks_per_gpu = 1;
  std::map<std::string, std::int64_t> params;  // filled in by the plan

  bool operator==(const Tenant& o) const {
    return kernel == o.kernel && precision == o.precision && size == o.size && ranks_per_gpu == o.ranks_per_gpu &&
           params == o.params;
  }
};

struct Options {
  std::vector<std::string> kernels;                            // empty: every registered kernel
  std::vector<std::string> precisions;                         // empty: each kernel's defaults
  bool all_precisions = false;                                 // --precision all
  std::vector<std::int64_t> sizes;                             // for every kernel without its own list
  std::map<std::string, std::vector<std::int64_t>> kernel_sizes;  // --size KERNEL=LIST
  std::vector<int> ranks_per_gpu;                              // empty: 1, 2, 4, ... max
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
  // --param KERNEL.NAME=VALUE: kernel -> name -> value (checked against KernelInfo::params)
  std::map<std::string, std::map<std::string, std::int64_t>> kernel_params;
  std::optional<std::int64_t> allreduce_bytes;                 // --allreduce: a host MPI_Allreduce per iteration
  std::string mix;                                             // --mix as given; empty: none
  std::vector<Tenant> mix_tenants;                             // --mix parsed
  bool show_help = false;
  bool show_version = false;
  bool list_kernels = false;
  bool list_presets = false;
};

// `--precision all`: every precision of each kernel.
inline const char* const kAllPrecisions = "all";

// Throws UsageError naming the offending value. Expands --preset first.
Options parse_options(const std::vector<std::string>& args);
std::string usage_text();
const char* to_string(DeviceChoice choice);

}  // namespace mpsb
