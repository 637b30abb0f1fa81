// Opening every rank's GPU context at start-up, collectively, so that a bad
// environment stops all ranks alike and each rank can attribute the GPU
// memory its own context took.
#pragma once

#include <vector>

#include "device.hpp"
#include "mpi_context.hpp"

namespace mpsb {

// Throws UsageError on every rank, naming the first rank whose
// CUDA_MPS_ACTIVE_THREAD_PERCENTAGE is malformed. Collective over ctx.world.
void check_thread_percentage_everywhere(const MpiContext& ctx);

// Local rank r opens usable[r mod G]. The ranks of a host take turns (collective
// over ctx.node, the same number of turns on every rank even when their GPU
// lists differ), and each rank's context memory is the drop in free memory
// since the previous context on the same physical GPU (same UUID), unknown
// when that is ambiguous.
GpuInfo open_gpus_in_turn(const MpiContext& ctx, const std::vector<int>& usable);

}  // namespace mpsb
