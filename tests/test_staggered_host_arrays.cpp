// The staggered host layout (kernels/staggered_host_arrays.hpp): every array
// at its designed offset modulo 4 KiB whatever the heap did before, none
// overlapping; and hybrid's CPU-phase arrays in it, on both devices.
#include <gtest/gtest.h>

#include <cstdint>
#include <cstdlib>
#include <memory>
#include <set>
#include <vector>

#include "gpu_test.hpp"
#include "hybrid_cpu.hpp"
#include "hybrid_workload.hpp"
#include "registry.hpp"
#include "staggered_host_arrays.hpp"

namespace mpsb {
namespace {

std::size_t page_offset(const void* p) { return reinterpret_cast<std::uintptr_t>(p) % kPageBytes; }

// Blocks of odd sizes left allocated, so the next allocation lands wherever this heap history puts it.
std::vector<std::unique_ptr<char[]>> junk(int seed) {
  std::vector<std::unique_ptr<char[]>> out;
  for (int i = 0; i < 7 + seed; ++i) out.emplace_back(new char[static_cast<std::size_t>(24 + 977 * i + 13 * seed)]);
  return out;
}

// Each array filled with its own value, then all read back: any overlap overwrites another's value.
void expect_disjoint(const StaggeredHostArrays& a, std::int64_t n) {
  for (int j = 0; j < a.arrays(); ++j) {
    for (std::int64_t i = 0; i < n; ++i) a.array(j)[i] = static_cast<float>(j + 1);
  }
  for (int j = 0; j < a.arrays(); ++j) {
    for (std::int64_t i = 0; i < n; ++i) ASSERT_EQ(a.array(j)[i], static_cast<float>(j + 1)) << j << " " << i;
  }
}

TEST(StaggeredLayout, DistinctCacheLineAlignedOffsetsAndNoOverlap) {
  for (std::int64_t n : {std::int64_t{1}, std::int64_t{1000}, std::int64_t{1024}, std::int64_t{262144} + 3}) {
    std::set<std::size_t> in_page;
    for (int j = 0; j < kMaxStaggeredArrays; ++j) {
      const std::size_t at = staggered_offset(j, n);
      EXPECT_EQ(at % kPageBytes, j * kStaggerBytes) << "slot " << j << ", n " << n;
      EXPECT_EQ(at % kArrayAlignment, 0u);
      in_page.insert(at % kPageBytes);
      if (j + 1 < kMaxStaggeredArrays) {
        EXPECT_LE(at + static_cast<std::size_t>(n) * sizeof(float), staggered_offset(j + 1, n));
      }
    }
    EXPECT_EQ(in_page.size(), static_cast<std::size_t>(kMaxStaggeredArrays));
    for (int arrays = 1; arrays <= kMaxStaggeredArrays; ++arrays) {
      // The last array ends inside the block even when the allocator's pointer needs aligning up.
      EXPECT_LE(staggered_offset(arrays - 1, n) + static_cast<std::size_t>(n) * sizeof(float) + kPageBytes - 1,
                staggered_block_bytes(arrays, n));
    }
  }
  // Every two slots at least a quarter page apart modulo the page, in both directions.
  for (int a = 0; a < kMaxStaggeredArrays; ++a) {
    for (int b = 0; b < kMaxStaggeredArrays; ++b) {
      if (a == b) continue;
      const std::size_t d = (staggered_offset(a, 64) + kPageBytes - staggered_offset(b, 64) % kPageBytes) % kPageBytes;
      EXPECT_GE(d, 1024u) << a << " " << b;
    }
  }
}

TEST(StaggeredLayout, RefusesShapesItCannotLayOut) {
  EXPECT_THROW(StaggeredHostArrays(0, 8, HostMemory::pageable), std::invalid_argument);
  EXPECT_THROW(StaggeredHostArrays(kMaxStaggeredArrays + 1, 8, HostMemory::pageable), std::invalid_argument);
  EXPECT_THROW(StaggeredHostArrays(2, 0, HostMemory::pageable), std::invalid_argument);
}

TEST(StaggeredHostArrays, DesignedOffsetsWhateverTheHeapDidBefore) {
  for (int history = 0; history < 4; ++history) {
    const auto before = junk(history);
    for (int arrays = 1; arrays <= kMaxStaggeredArrays; ++arrays) {
      for (std::int64_t n : {std::int64_t{5}, std::int64_t{40000}}) {
        const StaggeredHostArrays a(arrays, n, HostMemory::pageable);
        for (int j = 0; j < arrays; ++j) EXPECT_EQ(page_offset(a.array(j)), j * kStaggerBytes) << history;
        EXPECT_EQ(a.array(arrays), nullptr);
        expect_disjoint(a, n);
      }
    }
  }
}


TEST(HybridLayout, CpuPhaseArraysAreStaggered) {
  for (int history = 0; history < 3; ++history) {
    const auto before = junk(history);
    for (int sweeps : {hybrid::kBalancedSweeps, hybrid::kCpuHeavySweeps}) {
      const hybrid::CpuPhaseArrays a(4096, sweeps, HostMemory::pageable);
      using A = hybrid::CpuPhaseArrays;
      EXPECT_EQ(page_offset(a.prev()), A::kPrevSlot * kStaggerBytes);
      EXPECT_EQ(page_offset(a.forcing()), A::kForcingSlot * kStaggerBytes);
      EXPECT_EQ(page_offset(a.input()), A::kInputSlot * kStaggerBytes);
      if (sweeps > 1) {
        EXPECT_EQ(page_offset(a.scratch()), A::kScratchSlot * kStaggerBytes);
      } else {
        EXPECT_EQ(a.scratch(), nullptr);  // one sweep writes input directly
      }
    }
  }
}

// The workload itself runs in the layout: its last input sits at the input slot's offset in every process.
TEST(HybridLayout, CpuWorkloadUsesIt) {
  for (int history = 0; history < 3; ++history) {
    const auto before = junk(history);
    for (const char* p : {"fp32", "fp32-cpu-heavy"}) {
      auto w = make_hybrid(DeviceKind::cpu, p, 1000);
      w->setup(3);
      w->run();
      const float* input = dynamic_cast<const hybrid::HybridWorkload&>(*w).last_input();
      EXPECT_EQ(page_offset(input), hybrid::CpuPhaseArrays::kInputSlot * kStaggerBytes) << p;
      EXPECT_TRUE(w->verify().ok) << p;
    }
  }
}

TEST(HybridLayout, GpuWorkloadUsesItPinned) {
  if (!gpu_usable()) GTEST_SKIP() << "no usable CUDA GPU";
  MPSB_CUDA(cudaSetDevice(0));
  const StaggeredHostArrays pinned(kMaxStaggeredArrays, 4096, HostMemory::pinned);
  for (int j = 0; j < kMaxStaggeredArrays; ++j) {
    EXPECT_EQ(page_offset(pinned.array(j)), j * kStaggerBytes);
    cudaPointerAttributes attributes{};
    MPSB_CUDA(cudaPointerGetAttributes(&attributes, pinned.array(j)));
    EXPECT_EQ(attributes.type, cudaMemoryTypeHost) << "slot " << j << " is not page-locked";
  }
  expect_disjoint(pinned, 4096);
  cudaStream_t stream = nullptr;
  MPSB_CUDA(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
  auto w = make_hybrid(DeviceKind::gpu, "fp32-cpu-heavy", 1000, stream);
  w->setup(5);
  w->run();
  w->sync();
  EXPECT_EQ(page_offset(dynamic_cast<const hybrid::HybridWorkload&>(*w).last_input()),
            hybrid::CpuPhaseArrays::kInputSlot * kStaggerBytes);
  EXPECT_TRUE(w->verify().ok);
  w.reset();
  MPSB_CUDA(cudaStreamDestroy(stream));
}

}  // namespace
}  // namespace mpsb
