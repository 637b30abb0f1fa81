#include "sharing/device.hpp"

#include <cublas_v2.h>
#include <cuda_runtime_api.h>

#include <algorithm>
#include <cctype>
#include <cstdio>
#include <cstdlib>

#include "runtime/check.hpp"
#include "sharing/mps_memory_limit.hpp"
#include "sharing/sharing_state.hpp"

namespace mpsb {
namespace {

// The runtime's 16 bytes as 8-4-4-4-12 hex: "GPU-" or "MIG-" goes in front
// (cuda_uuid_text), for the runtime does not say which kind of device it is.
std::string uuid_hex(const cudaUUID_t& uuid) {
  const auto* b = reinterpret_cast<const unsigned char*>(uuid.bytes);
  char text[64];
  std::snprintf(text, sizeof text, "%02x%02x%02x%02x-%02x%02x-%02x%02x-%02x%02x-%02x%02x%02x%02x%02x%02x", b[0],
                b[1], b[2], b[3], b[4], b[5], b[6], b[7], b[8], b[9], b[10], b[11], b[12], b[13], b[14], b[15]);
  return text;
}

std::string lower(std::string text) {
  for (auto& c : text) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return text;
}

bool is_uuid_selector(const std::string& item) { return item.rfind("GPU-", 0) == 0 || item.rfind("MIG-", 0) == 0; }

std::string compute_mode_name(int mode) {
  switch (mode) {
    case cudaComputeModeDefault: return "DEFAULT";
    case cudaComputeModeExclusiveProcess: return "EXCLUSIVE_PROCESS";
    case cudaComputeModeProhibited: return "PROHIBITED";
    default: return "UNKNOWN(" + std::to_string(mode) + ")";
  }
}

int attribute(cudaDeviceAttr attr, int device) {
  int value = 0;
  MPSB_CUDA(cudaDeviceGetAttribute(&value, attr, device));
  return value;
}

}  // namespace

class CudaMpsProbe final : public MpsProbe {
 public:
  bool mps_enabled(int device) const override { return attribute(cudaDevAttrMpsEnabled, device) != 0; }
  int sm_count(int device) const override { return attribute(cudaDevAttrMultiProcessorCount, device); }
  std::optional<std::string> environment(const char* name) const override {
    const char* value = std::getenv(name);
    if (value == nullptr) return std::nullopt;
    return std::string(value);
  }
};

bool uuid_selector_matches(const std::string& selector, const std::string& uuid) {
  if (!is_uuid_selector(selector) || selector.size() <= 4 || !is_uuid_selector(uuid)) return false;
  return lower(uuid.substr(4)).rfind(lower(selector.substr(4)), 0) == 0;
}

GpuProbe resolve_gpu_selection(const std::vector<std::string>& requested,
                               const std::vector<std::string>& device_uuids) {
  GpuProbe probe;
  const int count = static_cast<int>(device_uuids.size());
  if (requested.empty()) {
    for (int i = 0; i < count; ++i) probe.usable.push_back(i);
    return probe;
  }
  for (const auto& item : requested) {
    int index = -1;
    if (is_uuid_selector(item)) {
      std::string matches;
      int found = 0;
      for (int i = 0; i < count; ++i) {
        if (!uuid_selector_matches(item, device_uuids[static_cast<std::size_t>(i)])) continue;
        matches += (matches.empty() ? "" : ", ") + std::to_string(i);
        if (found++ == 0) index = i;
      }
      if (found == 0) {
        probe.problem = "--gpus: no visible CUDA device has UUID " + item + " (" + std::to_string(count) + " visible)";
      } else if (found > 1) {
        probe.problem = "--gpus: " + item + " names several CUDA devices (" + matches + "); give more of the UUID";
      }
    } else {
      index = std::atoi(item.c_str());
      if (index >= count) {
        probe.problem = "--gpus: GPU " + item + " does not exist (" + std::to_string(count) + " visible)";
      }
    }
    if (!probe.problem.empty()) {
      probe.usable.clear();
      return probe;
    }
    if (std::find(probe.usable.begin(), probe.usable.end(), index) != probe.usable.end()) {
      probe.problem = "--gpus: " + item + " is CUDA device " + std::to_string(index) + ", listed already";
      probe.usable.clear();
      return probe;
    }
    probe.usable.push_back(index);
  }
  return probe;
}

GpuProbe probe_gpus(const std::vector<std::string>& requested) {
  GpuProbe probe;
  int count = 0;
  const cudaError_t status = cudaGetDeviceCount(&count);
  if (status != cudaSuccess) {
    cudaGetLastError();  // clear the sticky-free error so later calls start clean
    probe.problem = std::string("cudaGetDeviceCount: ") + cudaGetErrorString(status);
    return probe;
  }
  if (count == 0) {
    probe.problem = "no CUDA device visible";
    return probe;
  }
  // UUIDs are read only when some item is one (no context is created for them).
  std::vector<std::string> uuids(static_cast<std::size_t>(count));
  if (std::any_of(requested.begin(), requested.end(), is_uuid_selector)) {
    for (int i = 0; i < count; ++i) {
      cudaDeviceProp prop{};
      MPSB_CUDA(cudaGetDeviceProperties(&prop, i));
      uuids[static_cast<std::size_t>(i)] = "GPU-" + uuid_hex(prop.uuid);  // the kind does not matter for matching
    }
  }
  return resolve_gpu_selection(requested, uuids);
}

GpuInfo open_gpu(int index) {
  MPSB_CUDA(cudaSetDevice(index));
  MPSB_CUDA(cudaFree(nullptr));  // creates the context: MPS state is decided here
  cudaDeviceProp prop{};
  MPSB_CUDA(cudaGetDeviceProperties(&prop, index));
  GpuInfo info;
  info.index = index;
  info.name = prop.name;
  const MigSnapshot mig = read_mig_snapshot();
  info.uuid = cuda_uuid_text(uuid_hex(prop.uuid), mig);
  info.mig = mig_record_for(info.uuid, mig);
  info.compute_mode = compute_mode_name(attribute(cudaDevAttrComputeMode, index));
  info.sm_clock_peak_khz = attribute(cudaDevAttrClockRate, index);
  const SharingState sharing = read_sharing_state(CudaMpsProbe(), index);
  info.mps_enabled = sharing.mps_enabled;
  info.sm_count = sharing.sm_count;
  info.mps_active_thread_percentage = sharing.active_thread_percentage;
  std::size_t free_bytes = 0, total_bytes = 0;
  MPSB_CUDA(cudaMemGetInfo(&free_bytes, &total_bytes));
  info.memory_total_bytes = total_bytes;
  info.memory_free_bytes = free_bytes;
  // Checked on every rank before any context (check_thread_percentage_everywhere): parses.
  const char* limits = std::getenv(kPinnedMemLimitVariable);
  info.mps_pinned_mem_limit_bytes =
      applicable_pinned_mem_limit(limits ? std::optional<std::string>(limits) : std::nullopt, info.mps_enabled, index,
                                  info.uuid);
  set_pinned_memory_limit(info.mps_pinned_mem_limit_bytes);  // named by every out-of-memory error from now on
  return info;
}

std::uint64_t current_gpu_free_bytes() {
  std::size_t free_bytes = 0, total_bytes = 0;
  MPSB_CUDA(cudaMemGetInfo(&free_bytes, &total_bytes));
  return free_bytes;
}

CudaVersions cuda_versions() {
  CudaVersions v;
  if (cudaDriverGetVersion(&v.driver) != cudaSuccess) v.driver = 0;
  if (cudaRuntimeGetVersion(&v.runtime) != cudaSuccess) v.runtime = 0;
  int major = 0, minor = 0, patch = 0;
  if (cublasGetProperty(MAJOR_VERSION, &major) == CUBLAS_STATUS_SUCCESS &&
      cublasGetProperty(MINOR_VERSION, &minor) == CUBLAS_STATUS_SUCCESS &&
      cublasGetProperty(PATCH_LEVEL, &patch) == CUBLAS_STATUS_SUCCESS) {
    v.cublas = major * 10000 + minor * 100 + patch;
  }
  return v;
}

std::string format_cuda_version(int version) {
  if (version <= 0) return "none";
  return std::to_string(version / 1000) + "." + std::to_string((version % 1000) / 10);
}

}  // namespace mpsb
