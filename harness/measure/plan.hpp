// The sweep: kernels x precisions x sizes x active ranks per GPU, in suite
// order, built from what a run asks for (PlanRequest) once the devices are
// known. The plan knows nothing of the command line; cli/ fills the request.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "measure/placement.hpp"
#include "sharing/sharing_state.hpp"
#include "workload.hpp"

namespace mpsb {

// One tenant of a mix: KERNEL[/PRECISION[/SIZE]]:RANKS. An empty precision or
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

// What to run; every list empty: the defaults of every registered kernel.
struct PlanRequest {
  std::vector<std::string> kernels;                               // empty: every registered kernel
  std::vector<std::string> precisions;                            // empty: each kernel's defaults
  bool all_precisions = false;                                    // every precision of each kernel
  std::vector<std::int64_t> sizes;                                // for every kernel without its own list
  std::map<std::string, std::vector<std::int64_t>> kernel_sizes;  // kernel -> its own sizes
  std::vector<int> ranks_per_gpu;                                 // empty: 1, 2, 4, ... max
  // kernel -> parameter -> value (checked against KernelInfo::params)
  std::map<std::string, std::map<std::string, std::int64_t>> kernel_params;
  std::string mix;             // the mix as the user wrote it; empty: none
  std::vector<Tenant> mix_tenants;  // the mix: tenants of one GPU, each at its own rank count
};

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
std::vector<Config> build_plan(const PlanRequest& request, SharingMode mode, DeviceKind device,
                               int max_ranks_per_device, int device_count);

std::string format_bytes(double bytes);  // "1.50 GiB"

}  // namespace mpsb
