// The checks that refuse a plan on its placement before any work, on every
// rank alike: each rank's sharing state against --mode, the MPS memory limits
// in force, the green partitions a plan needs, and memory that cannot fit.
#pragma once

#include <string>
#include <vector>

#include "measure/placement.hpp"
#include "measure/plan.hpp"
#include "runtime/mpi_context.hpp"
#include "sharing/mps_memory_limit.hpp"
#include "sharing/sharing_state.hpp"

namespace mpsb {

// Throws UsageError naming the first rank whose context contradicts `mode`
// (verify_sharing_state over every rank of the placement).
void verify_placement_sharing(SharingMode mode, const Placement& placement);

// Every rank's limit and free memory (after every context exists), from the placement.
std::vector<RankMemoryLimit> pinned_mem_limits(const Placement& placement);

// Before any work in --mode green, collective over ctx.world: the device must
// be a GPU, and on the first rank of each GPU (the one that runs the
// instances) the driver must split that GPU into the k partitions of every
// rank count of the plan and create a green context in one. Throws the same
// UsageError on every rank, naming the first rank that cannot.
void check_green_partitions(const MpiContext& ctx, const Placement& placement, const std::vector<Config>& plan);

// Throws UsageError when the buffers of one rank of some configuration cannot
// fit in the free memory of its GPU (that size is bad input). Returns one
// line for each configuration whose k active ranks together may not fit: it
// still runs, and an allocation failure records it as failed (measure.cpp)
// while the sweep goes on, so the smaller rank counts are not lost.
std::vector<std::string> preflight_memory(const std::vector<Config>& plan, const Placement& placement);

}  // namespace mpsb
