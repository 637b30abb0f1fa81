#include "device.hpp"

#include <cublas_v2.h>
#include <cuda_runtime_api.h>

#include <cstdio>
#include <cstdlib>

#include "check.hpp"
#include "sharing.hpp"

namespace mpsb {
namespace {

std::string uuid_text(const cudaUUID_t& uuid) {
  const auto* b = reinterpret_cast<const unsigned char*>(uuid.bytes);
  char text[64];
  std::snprintf(text, sizeof text, "GPU-%02x%02x%02x%02x-%02x%02x-%02x%02x-%02x%02x-%02x%02x%02x%02x%02x%02x", b[0],
                b[1], b[2], b[3], b[4], b[5], b[6], b[7], b[8], b[9], b[10], b[11], b[12], b[13], b[14], b[15]);
  return text;
}

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

GpuProbe probe_gpus(const std::vector<int>& requested) {
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
  if (requested.empty()) {
    for (int i = 0; i < count; ++i) probe.usable.push_back(i);
    return probe;
  }
  for (int index : requested) {
    if (index >= count) {
      probe.problem = "--gpus: GPU " + std::to_string(index) + " does not exist (" + std::to_string(count) +
                      " visible)";
      probe.usable.clear();
      return probe;
    }
    probe.usable.push_back(index);
  }
  return probe;
}

GpuInfo open_gpu(int index) {
  MPSB_CUDA(cudaSetDevice(index));
  MPSB_CUDA(cudaFree(nullptr));  // creates the context: MPS state is decided here
  cudaDeviceProp prop{};
  MPSB_CUDA(cudaGetDeviceProperties(&prop, index));
  GpuInfo info;
  info.index = index;
  info.name = prop.name;
  info.uuid = uuid_text(prop.uuid);
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
