// What a rank finds on its host: how many GPUs it may use, and the properties
// of the one it opens (read after its context exists, so the MPS state and the
// SM count are the ones this process actually got).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace mpsb {

struct GpuProbe {
  std::vector<int> usable;  // CUDA device indices this rank may use, in --gpus order
  std::string problem;      // why none is usable, or a bad --gpus index; empty when fine
};
GpuProbe probe_gpus(const std::vector<int>& requested);

struct GpuInfo {
  int index = -1;
  std::string name;
  std::string uuid;                 // "GPU-xxxxxxxx-..." as nvidia-smi prints it
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
