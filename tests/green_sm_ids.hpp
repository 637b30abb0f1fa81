// For test_green_context: which SMs the blocks of a kernel ran on.
#pragma once

#include <vector>

#include <cuda_runtime_api.h>

namespace mpsb {

// Launches `blocks` blocks on `stream`, each spinning for about `spin_cycles`
// clock cycles so the blocks spread over every SM they may use, and returns
// the %smid each block ran on (synchronizes the stream).
std::vector<int> sm_ids_of_blocks(cudaStream_t stream, int blocks, long long spin_cycles);

}  // namespace mpsb
