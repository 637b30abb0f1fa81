// The sweep: kernels x precisions x sizes x active ranks per GPU, in suite
// order, and the preflight checks that reject a plan before any work.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "cli/options.hpp"
#include "measure/placement.hpp"
#include "workload.hpp"

namespace mpsb {

struct Config {
  std::string kernel;
  std::string precision;
  std::int64_t size = 0;
  int ranks_per_gpu = 1;
  KernelParams params;  // every parameter the kernel declares, defaults filled in
  // A mix (--mix): kernel "mix", precision the canonical spec, size 0, and
  // ranks_per_gpu the sum of the tenants'; empty otherwise.
  std::vector<Tenant> tenants;

  bool is_mix() const { return !tenants.empty(); }
  bool operator==(const Config& o) const {
    return kernel == o.kernel && precision == o.precision && size == o.size && ranks_per_gpu == o.ranks_per_gpu &&
           params == o.params && tenants == o.tenants;
  }
};

inline const char* const kMixKernel = "mix";

// "matmul/fp32/2048:4,inference/fp16/64:4"
std::string mix_name(const std::vector<Tenant>& tenants);
// The configuration the `slot`-th active rank of a GPU runs: the tenant that
// slot falls in for a mix, the configuration itself otherwise.
Config config_of_slot(const Config& config, int slot);
// Index of the tenant of that slot (0 for a homogeneous configuration).
int tenant_of_slot(const Config& config, int slot);

// 1, 2, 4, ... below max, then max itself.
std::vector<int> default_rank_counts(int max_ranks_per_device);

// Most instances one rank runs in --mode streams or green.
inline constexpr int kMaxStreamInstances = 64;

// Throws UsageError for rank counts above what exists (in streams and green
// mode: above kMaxStreamInstances, since one rank runs all instances).
std::vector<Config> build_plan(const Options& options, DeviceKind device, int max_ranks_per_device,
                               int device_count);

std::string format_bytes(double bytes);  // "1.50 GiB"

}  // namespace mpsb
