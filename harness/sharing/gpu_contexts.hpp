// Opening every rank's GPU context at start-up, collectively, so that a bad
// environment stops all ranks alike and each rank can attribute the GPU
// memory its own context took.
#pragma once

#include <vector>

#include "runtime/mpi_context.hpp"
#include "sharing/device.hpp"
#include "sharing/mps_servers.hpp"

namespace mpsb {

// Throws UsageError on every rank, naming the first rank whose
// CUDA_MPS_ACTIVE_THREAD_PERCENTAGE or CUDA_MPS_PINNED_DEVICE_MEM_LIMIT is
// malformed. Collective over ctx.world.
void check_thread_percentage_everywhere(const MpiContext& ctx);

// Other users' MPS servers and control daemons (mps_servers.hpp), looked for
// by the first rank of every host: every rank gets the same list, so all
// refuse alike (a UsageError on every rank with `policy` refuse), or rank 0
// prints the one warning line (go_on). Collective over ctx.world; before any
// GPU work.
std::vector<MpsProcess> check_other_mps_users_everywhere(const MpiContext& ctx, OtherMpsUsers policy);

// Local rank r opens usable[r mod G]. The ranks of a host take turns (collective
// over ctx.node, the same number of turns on every rank even when their GPU
// lists differ), and each rank's context memory is the drop in free memory
// since the previous context on the same physical GPU (same UUID), unknown
// when that is ambiguous.
GpuInfo open_gpus_in_turn(const MpiContext& ctx, const std::vector<int>& usable);

}  // namespace mpsb
