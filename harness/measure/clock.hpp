// Wall-clock time comparable across ranks. On one host every process reads the
// same monotonic clock; ranks on other hosts estimate their offset to rank 0
// once at start-up (min-round-trip ping-pong), so window = max(end) - min(start)
// stays meaningful across nodes.
#pragma once

#include <string>
#include <vector>

#include "runtime/mpi_context.hpp"

namespace mpsb {

double now_seconds();  // steady clock, seconds
// Collective over ctx.world; `hosts` holds every rank's host. Returns the
// value to add to this rank's now_seconds() to get rank 0's clock.
double clock_offset_to_root(const MpiContext& ctx, const std::vector<std::string>& hosts);

}  // namespace mpsb
