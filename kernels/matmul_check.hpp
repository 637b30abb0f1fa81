// matmul's check of C where C is, on the GPU (issue 28): verifying an 8192 x 8192 product had
// downloaded all of C (256 MiB, a quarter to half a second per instance and configuration) to look
// for one entry that is not finite and read about a thousand sampled ones. Both are done on the device;
// only the answer and the sampled values come back. The comparison itself is check_product's
// (matmul_cpu.hpp), the same as for C on the host.
#pragma once

#include <cstdint>
#include <vector>

#include <cuda_runtime_api.h>

#include "matmul_cpu.hpp"

namespace mpsb::matmul {

// `c`: N x N row-major on the device, float (bf16 false) or __nv_bfloat16 (bf16 true); `entries`: the
// row-major indices (i * N + j) whose values are wanted, in order. Runs on `stream` and waits for it.
ProductCheckInput check_on_device(const void* c, std::int64_t n, bool bf16, const std::vector<std::int64_t>& entries,
                                  cudaStream_t stream);

}  // namespace mpsb::matmul
