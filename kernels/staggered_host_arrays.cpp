#include "staggered_host_arrays.hpp"

#include <cstdint>
#include <cstdlib>
#include <new>
#include <stdexcept>

#include <cuda_runtime_api.h>

#include "cuda_check.hpp"

namespace mpsb {
namespace {

std::size_t round_up(std::size_t bytes, std::size_t multiple) { return (bytes + multiple - 1) / multiple * multiple; }

// Every slot gets a region of whole pages large enough for its array at the largest stagger.
std::size_t region_bytes(std::int64_t floats_each) {
  const std::size_t array_bytes = static_cast<std::size_t>(floats_each) * sizeof(float);
  return round_up(array_bytes + (kMaxStaggeredArrays - 1) * kStaggerBytes, kPageBytes);
}

void check_shape(int arrays, std::int64_t floats_each) {
  if (arrays < 1 || arrays > kMaxStaggeredArrays) {
    throw std::invalid_argument("staggered host arrays: " + std::to_string(arrays) + " arrays, expected 1 to " +
                                std::to_string(kMaxStaggeredArrays));
  }
  if (floats_each < 1) throw std::invalid_argument("staggered host arrays: arrays must hold at least one float");
}

}  // namespace

std::size_t staggered_offset(int slot, std::int64_t floats_each) {
  check_shape(slot + 1, floats_each);
  return static_cast<std::size_t>(slot) * (region_bytes(floats_each) + kStaggerBytes);
}

// One page more than the regions: where the allocator's pointer is not page-aligned, the block is
// aligned up inside it.
std::size_t staggered_block_bytes(int arrays, std::int64_t floats_each) {
  check_shape(arrays, floats_each);
  return static_cast<std::size_t>(arrays) * region_bytes(floats_each) + kPageBytes;
}

void HostBlockRelease::operator()(void* p) const {
  if (memory == HostMemory::pinned) {
    cudaFreeHost(p);  // no throw from a deleter; an error resurfaces at the next CUDA call
  } else {
    std::free(p);
  }
}

StaggeredHostArrays::StaggeredHostArrays(int arrays, std::int64_t floats_each, HostMemory memory)
    : block_(nullptr, HostBlockRelease{memory}), arrays_(arrays), floats_each_(floats_each) {
  const std::size_t bytes = staggered_block_bytes(arrays, floats_each);
  void* p = nullptr;
  if (memory == HostMemory::pinned) {
    MPSB_CUDA(cudaMallocHost(&p, bytes));
  } else {
    p = std::malloc(bytes);
    if (p == nullptr) throw std::bad_alloc();
  }
  block_.reset(p);
  const auto address = reinterpret_cast<std::uintptr_t>(p);
  base_ = static_cast<char*>(p) + (round_up(address, kPageBytes) - address);
}

float* StaggeredHostArrays::array(int slot) const {
  if (slot < 0 || slot >= arrays_) return nullptr;
  return reinterpret_cast<float*>(base_ + staggered_offset(slot, floats_each_));
}

}  // namespace mpsb
