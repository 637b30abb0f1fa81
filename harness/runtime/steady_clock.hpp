// The one clock every phase, window and telemetry sample is timed with: the
// monotonic steady clock in seconds. Layers 2 and up share it, so a GPU
// monitor's sample times compare directly with a repetition's start and end.
#pragma once

#include <chrono>

namespace mpsb {

inline double now_seconds() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

}  // namespace mpsb
