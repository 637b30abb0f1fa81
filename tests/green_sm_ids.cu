#include "green_sm_ids.hpp"

#include "runtime/check.hpp"

namespace mpsb {
namespace {

__global__ void record_sm_id(int* ids, long long spin_cycles) {
  if (threadIdx.x == 0) {
    unsigned int id = 0;
    asm volatile("mov.u32 %0, %%smid;" : "=r"(id));
    const long long start = clock64();
    while (clock64() - start < spin_cycles) {
    }
    ids[blockIdx.x] = static_cast<int>(id);
  }
}

}  // namespace

std::vector<int> sm_ids_of_blocks(cudaStream_t stream, int blocks, long long spin_cycles) {
  int* ids = nullptr;
  MPSB_CUDA(cudaMalloc(&ids, sizeof(int) * static_cast<std::size_t>(blocks)));
  MPSB_CUDA(cudaMemsetAsync(ids, 0xff, sizeof(int) * static_cast<std::size_t>(blocks), stream));
  record_sm_id<<<static_cast<unsigned>(blocks), 32, 0, stream>>>(ids, spin_cycles);
  MPSB_CUDA_LAUNCH();
  std::vector<int> out(static_cast<std::size_t>(blocks));
  MPSB_CUDA(cudaMemcpyAsync(out.data(), ids, sizeof(int) * out.size(), cudaMemcpyDeviceToHost, stream));
  MPSB_CUDA(cudaStreamSynchronize(stream));
  MPSB_CUDA(cudaFree(ids));
  return out;
}

}  // namespace mpsb
