// What a rank finds on its host: how many GPUs it may use, and the properties
// of the one it opens (read after its context exists, so the MPS state and the
// SM count are the ones this process actually got).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "sharing/mig.hpp"

namespace mpsb {

struct GpuProbe {
  std::vector<int> usable;  // CUDA device indices this rank may use, in --gpus order
  std::string problem;      // why none is usable, or a bad --gpus item; empty when fine
};
// `requested`: --gpus items, each a CUDA device index ("1") or a GPU-/MIG- UUID
// (or a prefix of one); empty: every visible device.
GpuProbe probe_gpus(const std::vector<std::string>& requested);
// The pure part: `device_uuids[i]` is CUDA device i's UUID. A UUID item names
// the one device whose UUID it is or begins (GPU- and MIG- alike: the runtime
// does not say which it is); none or several is a problem starting "--gpus".
GpuProbe resolve_gpu_selection(const std::vector<std::string>& requested, const std::vector<std::string>& device_uuids);
// `selector` ("GPU-8932f937", "MIG-...") names `uuid`: the hex after the
// prefix is a case-insensitive prefix of uuid's.
bool uuid_selector_matches(const std::string& selector, const std::string& uuid);

struct GpuInfo {
  int index = -1;
  std::string name;
  std::string uuid;                 // "GPU-xxxxxxxx-..." (or "MIG-..." for a MIG device) as nvidia-smi prints it
  int sm_count = 0;                 // as this process sees it (MPS thread percentage lowers it)
  std::uint64_t memory_total_bytes = 0;
  std::uint64_t memory_free_bytes = 0;
  std::string compute_mode;         // DEFAULT, EXCLUSIVE_PROCESS, PROHIBITED
  int sm_clock_peak_khz = 0;
  bool mps_enabled = false;         // CU_DEVICE_ATTRIBUTE_MPS_ENABLED of this context
  std::optional<int> mps_active_thread_percentage;  // CUDA_MPS_ACTIVE_THREAD_PERCENTAGE, if set
  // Device memory this rank's context took (free before minus free after it
  // was created, the ranks of a GPU creating theirs one at a time); unknown for
  // the first rank of a GPU, which has no clean "before".
  std::optional<std::uint64_t> context_memory_bytes;
  // CUDA_MPS_PINNED_DEVICE_MEM_LIMIT for this device when the rank is an MPS client.
  std::optional<std::uint64_t> mps_pinned_mem_limit_bytes;
  // MIG mode and devices of the physical GPU (mig.hpp); none when NVML could not tell.
  std::optional<MigRecord> mig;
};
// Makes `index` current, creates its context and reads its properties.
GpuInfo open_gpu(int index);
// Free memory now, on the current device.
std::uint64_t current_gpu_free_bytes();

struct CudaVersions {
  int driver = 0;   // 0 when no driver is installed
  int runtime = 0;
  int cublas = 0;
};
CudaVersions cuda_versions();
// "13.0" from 13000.
std::string format_cuda_version(int version);

}  // namespace mpsb
