// Deterministic, fast pseudo-random inputs (splitmix64), identical on every
// platform so CPU and GPU runs of one seed see the same data. Never zeros:
// zeros hide unwritten outputs and can run faster than real data. The
// generators are host-and-device functions: a GPU workload makes its inputs
// where they are used, and the host reference makes the same values alone.
#pragma once

#include <cstddef>
#include <cstdint>

#include "host_device.hpp"

namespace mpsb {

MPSB_HOST_DEVICE inline std::uint64_t splitmix64(std::uint64_t& state) {
  std::uint64_t z = (state += 0x9E3779B97F4A7C15ull);
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}

// Uniform in [lo, hi) from the top 24 bits (exactly representable in float).
MPSB_HOST_DEVICE inline float uniform_float(std::uint64_t& state, float lo, float hi) {
  const float unit = static_cast<float>(splitmix64(state) >> 40) * (1.0f / 16777216.0f);
#if defined(__CUDA_ARCH__)
  return __fadd_rn(lo, __fmul_rn(hi - lo, unit));  // never fused: the host's two roundings, bit for bit
#else
  return lo + (hi - lo) * unit;
#endif
}

inline void fill_uniform(float* data, std::size_t count, std::uint64_t seed, float lo, float hi) {
  std::uint64_t state = seed;
  for (std::size_t i = 0; i < count; ++i) data[i] = uniform_float(state, lo, hi);
}

// splitmix64 advances its state by a constant per draw, so the generator
// `draws` numbers on is this: a stream can be cut into chunks that start
// anywhere and give the same numbers.
MPSB_HOST_DEVICE inline std::uint64_t splitmix64_skip(std::uint64_t state, std::uint64_t draws) {
  return state + draws * 0x9E3779B97F4A7C15ull;
}

// The value fill_uniform(data, count, seed, lo, hi) writes at data[index], made alone.
MPSB_HOST_DEVICE inline float uniform_at(std::uint64_t seed, std::uint64_t index, float lo, float hi) {
  std::uint64_t state = splitmix64_skip(seed, index);
  return uniform_float(state, lo, hi);
}

}  // namespace mpsb
