// The CUDA stream and events of one GPU instance: its work goes to the stream,
// and the events time each repetition on the GPU.
#pragma once

#include <cuda_runtime_api.h>

#include "cuda_check.hpp"

namespace mpsb {

class GpuTimer {
 public:
  GpuTimer() {
    MPSB_CUDA(cudaStreamCreateWithFlags(&stream_, cudaStreamNonBlocking));
    MPSB_CUDA(cudaEventCreate(&start_));
    MPSB_CUDA(cudaEventCreate(&end_));
  }
  ~GpuTimer() {
    cudaEventDestroy(start_);
    cudaEventDestroy(end_);
    cudaStreamDestroy(stream_);
  }
  GpuTimer(const GpuTimer&) = delete;
  GpuTimer& operator=(const GpuTimer&) = delete;
  cudaStream_t stream() const { return stream_; }
  void record_start() { MPSB_CUDA(cudaEventRecord(start_, stream_)); }
  void record_end() { MPSB_CUDA(cudaEventRecord(end_, stream_)); }
  double elapsed_seconds() const {
    float ms = 0;
    MPSB_CUDA(cudaEventElapsedTime(&ms, start_, end_));
    return 1e-3 * static_cast<double>(ms);
  }

 private:
  cudaStream_t stream_ = nullptr;
  cudaEvent_t start_ = nullptr, end_ = nullptr;
};

}  // namespace mpsb
