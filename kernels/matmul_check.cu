#include "matmul_check.hpp"

#include <cuda_bf16.h>

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <limits>

#include "cuda_check.hpp"
#include "device_buffer.hpp"

namespace mpsb::matmul {
namespace {

constexpr unsigned long long kNone = std::numeric_limits<unsigned long long>::max();
constexpr int kThreads = 256;

// An exponent of all ones is infinity or NaN, in float as in bfloat16.
__device__ bool finite_at(const void* c, bool bf16, std::size_t idx) {
  if (bf16) return (static_cast<const unsigned short*>(c)[idx] & 0x7F80u) != 0x7F80u;
  return (static_cast<const unsigned int*>(c)[idx] & 0x7F800000u) != 0x7F800000u;
}

__device__ float value_at(const void* c, bool bf16, std::size_t idx) {
  return bf16 ? __bfloat162float(static_cast<const __nv_bfloat16*>(c)[idx]) : static_cast<const float*>(c)[idx];
}

// The smallest index of a non-finite entry (kNone where there is none).
__global__ void first_nonfinite(const void* c, bool bf16, std::size_t count, unsigned long long* first) {
  const std::size_t stride = static_cast<std::size_t>(gridDim.x) * blockDim.x;
  for (std::size_t idx = static_cast<std::size_t>(blockIdx.x) * blockDim.x + threadIdx.x; idx < count; idx += stride) {
    if (!finite_at(c, bf16, idx)) {
      atomicMin(first, static_cast<unsigned long long>(idx));
      return;  // this thread's later entries come after this one
    }
  }
}

__global__ void gather(const void* c, bool bf16, const long long* entries, std::size_t count, float* out) {
  const std::size_t e = static_cast<std::size_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (e < count) out[e] = value_at(c, bf16, static_cast<std::size_t>(entries[e]));
}

}  // namespace

ProductCheckInput check_on_device(const void* c, std::int64_t n, bool bf16, const std::vector<std::int64_t>& entries,
                                  cudaStream_t stream) {
  const auto count = static_cast<std::size_t>(n) * static_cast<std::size_t>(n);
  ProductCheckInput out;
  DeviceBuffer first(sizeof(unsigned long long));
  MPSB_CUDA(cudaMemsetAsync(first.as<void>(), 0xFF, sizeof(unsigned long long), stream));  // kNone
  const int blocks = static_cast<int>(std::min<std::size_t>((count + kThreads - 1) / kThreads, 4096));
  first_nonfinite<<<blocks, kThreads, 0, stream>>>(c, bf16, count, first.as<unsigned long long>());
  MPSB_CUDA(cudaGetLastError());
  unsigned long long found = kNone;
  MPSB_CUDA(cudaMemcpyAsync(&found, first.as<void>(), sizeof found, cudaMemcpyDeviceToHost, stream));
  MPSB_CUDA(cudaStreamSynchronize(stream));
  if (found != kNone) {
    out.all_finite = false;
    out.first_nonfinite = static_cast<std::size_t>(found);
    // Its value: the entry's bits, read alone (a bfloat16's are the upper half of a float's).
    std::uint32_t word = 0;
    std::uint16_t half = 0;
    const std::size_t element = bf16 ? sizeof half : sizeof word;
    const auto* at = static_cast<const unsigned char*>(c) + out.first_nonfinite * element;
    MPSB_CUDA(cudaMemcpyAsync(bf16 ? static_cast<void*>(&half) : static_cast<void*>(&word), at, element,
                              cudaMemcpyDeviceToHost, stream));
    MPSB_CUDA(cudaStreamSynchronize(stream));
    const std::uint32_t bits = bf16 ? static_cast<std::uint32_t>(half) << 16 : word;
    std::memcpy(&out.first_nonfinite_value, &bits, sizeof bits);
    return out;
  }
  out.at_entries.resize(entries.size());
  if (entries.empty()) return out;
  std::vector<long long> indices(entries.begin(), entries.end());
  DeviceBuffer where(indices.size() * sizeof(long long));
  DeviceBuffer values(indices.size() * sizeof(float));
  MPSB_CUDA(cudaMemcpyAsync(where.as<void>(), indices.data(), where.bytes(), cudaMemcpyHostToDevice, stream));
  gather<<<static_cast<unsigned>((indices.size() + kThreads - 1) / kThreads), kThreads, 0, stream>>>(
      c, bf16, where.as<long long>(), indices.size(), values.as<float>());
  MPSB_CUDA(cudaGetLastError());
  MPSB_CUDA(cudaMemcpyAsync(out.at_entries.data(), values.as<void>(), values.bytes(), cudaMemcpyDeviceToHost, stream));
  MPSB_CUDA(cudaStreamSynchronize(stream));
  return out;
}

}  // namespace mpsb::matmul
