#include "matmul_inputs.hpp"

#include <cuda_bf16.h>

#include <algorithm>

#include "cuda_check.hpp"

namespace mpsb::matmul {
namespace {

constexpr int kThreads = 256;
constexpr std::size_t kMaxBlocks = 8192;

__device__ void store(float* out, std::size_t i, float x) { out[i] = x; }
__device__ void store(__nv_bfloat16* out, std::size_t i, float x) { out[i] = __float2bfloat16(x); }  // nearest even

template <typename T>
__global__ void fill_operand(T* out, std::size_t count, std::uint64_t seed) {
  const std::size_t stride = static_cast<std::size_t>(gridDim.x) * blockDim.x;
  for (std::size_t i = static_cast<std::size_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < count; i += stride) {
    store(out, i, operand_value(seed, i));
  }
}

}  // namespace

void fill_on_device(void* out, bool bf16, std::size_t count, std::uint64_t operand_seed, cudaStream_t stream) {
  if (count == 0) return;
  const auto blocks = static_cast<unsigned>(std::min((count + kThreads - 1) / kThreads, kMaxBlocks));
  if (bf16) {
    fill_operand<<<blocks, kThreads, 0, stream>>>(static_cast<__nv_bfloat16*>(out), count, operand_seed);
  } else {
    fill_operand<<<blocks, kThreads, 0, stream>>>(static_cast<float*>(out), count, operand_seed);
  }
  MPSB_CUDA_LAUNCH();
}

}  // namespace mpsb::matmul
