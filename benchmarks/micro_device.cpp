#include "micro_device.hpp"

#include <benchmark/benchmark.h>
#include <cuda_runtime_api.h>

#include "cuda_check.hpp"

namespace mpsb::micro {
namespace {

// Empty when a GPU is usable, else why not.
std::string gpu_problem() {
  int count = 0;
  const cudaError_t status = cudaGetDeviceCount(&count);
  if (status != cudaSuccess) {
    cudaGetLastError();  // not sticky: clear it so later CUDA calls start clean
    return std::string("cudaGetDeviceCount: ") + cudaGetErrorString(status);
  }
  if (count == 0) return "no CUDA device visible";
  return "";
}

int attribute(cudaDeviceAttr attr, int device) {
  int value = 0;
  MPSB_CUDA(cudaDeviceGetAttribute(&value, attr, device));
  return value;
}

}  // namespace

DeviceInUse choose_device(DeviceRequest request) {
  DeviceInUse device;
  if (request == DeviceRequest::cpu) {
    device.note = "--device=cpu";
    return device;
  }
  const std::string problem = gpu_problem();
  if (!problem.empty()) {
    if (request == DeviceRequest::gpu) throw UsageError("--device=gpu: no usable GPU (" + problem + ")");
    device.note = "no usable GPU: " + problem;
    return device;
  }
  device.kind = DeviceKind::gpu;
  device.gpu_ordinal = 0;
  MPSB_CUDA(cudaSetDevice(device.gpu_ordinal));
  MPSB_CUDA(cudaFree(nullptr));  // creates the context: the SM count and MPS state are this context's
  cudaDeviceProp prop{};
  MPSB_CUDA(cudaGetDeviceProperties(&prop, device.gpu_ordinal));
  device.gpu_name = prop.name;
  device.sm_count = attribute(cudaDevAttrMultiProcessorCount, device.gpu_ordinal);
  device.mps_enabled = attribute(cudaDevAttrMpsEnabled, device.gpu_ordinal) != 0;
  return device;
}

void add_device_context(const DeviceInUse& device) {
  if (device.kind == DeviceKind::cpu) {
    benchmark::AddCustomContext("mpsbench_device", "cpu");
    benchmark::AddCustomContext("mpsbench_device_note", device.note);
    return;
  }
  benchmark::AddCustomContext("mpsbench_device", "gpu");
  benchmark::AddCustomContext("mpsbench_gpu", std::to_string(device.gpu_ordinal) + ": " + device.gpu_name);
  benchmark::AddCustomContext("mpsbench_gpu_sm_count", std::to_string(device.sm_count));
  benchmark::AddCustomContext("mpsbench_gpu_mps", device.mps_enabled ? "enabled" : "disabled");
  int runtime = 0;
  MPSB_CUDA(cudaRuntimeGetVersion(&runtime));
  benchmark::AddCustomContext("mpsbench_cuda_runtime",
                              std::to_string(runtime / 1000) + "." + std::to_string((runtime % 1000) / 10));
}

}  // namespace mpsb::micro
