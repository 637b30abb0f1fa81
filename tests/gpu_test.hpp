// What every GPU test shares: it skips cleanly where no GPU is usable (CI: no driver, or none visible)
// and runs for real on the GPU machine; most run on a non-blocking stream of GPU 0.
#pragma once

#include <gtest/gtest.h>

#include <cuda_runtime_api.h>

#include "cuda_check.hpp"

namespace mpsb {

// Whether CUDA sees a GPU here; the error of a failed query is cleared so the next call starts clean.
inline bool gpu_usable() {
  int count = 0;
  const bool ok = cudaGetDeviceCount(&count) == cudaSuccess && count > 0;
  static_cast<void>(cudaGetLastError());
  return ok;
}

// A test on GPU 0 with its own non-blocking stream (stream_), skipped where no GPU is usable.
class GpuStreamTest : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!gpu_usable()) GTEST_SKIP() << "no usable CUDA GPU";
    MPSB_CUDA(cudaSetDevice(0));
    MPSB_CUDA(cudaStreamCreateWithFlags(&stream_, cudaStreamNonBlocking));
  }
  void TearDown() override {
    if (stream_ != nullptr) cudaStreamDestroy(stream_);
  }
  cudaStream_t stream_ = nullptr;
};

}  // namespace mpsb
