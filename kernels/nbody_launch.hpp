// Work schedule of the GPU n-body force kernel. Free of CUDA runtime calls so
// the unit tests can check it on a machine without a GPU (the index functions
// are shared with the kernels); every tunable of the GPU kernel lives here,
// so a variant is one edit and a rebuild.
#pragma once

#include <algorithm>
#include <array>
#include <cstdint>
#include <tuple>

#include "host_device.hpp"

namespace mpsb::nbody {

// A shape of the force kernel (template arguments of forces_kernel):
//   threads:    threads per block, also the source bodies per shared-memory
//               tile (each thread stages one); one barrier per tile.
//   bodies:     target bodies each thread keeps in registers; every source
//               body read from shared memory serves that many interactions,
//               which is what lifts fp32 past the LDS limit.
//   unroll:     source bodies per unrolled inner-loop step; unrolling a whole
//               tile would bloat the code past the instruction cache.
//   min_blocks: __launch_bounds__ minimum resident blocks per SM (caps registers).
// Each precision lists its shapes in order of preference (below); a run
// takes the first that fills half a wave at its N (plan_schedule), so large N
// gets the fastest shape and small N one with more, smaller work units.
// fp32 (the nbody tuning log, fifth run; in git history as
// results/h100-2026-11-21/nbody-tuning.txt): 512 threads x
// 4 bodies (102 registers, one block of 16 warps per SM) beat 128 x 4 by 2%
// at N = 262144 (fewer barriers per source), which beat 128 x 4 at 96
// registers and 5 blocks by 4%. The first fp32 shape can be overridden at
// build time (-DMPSB_NBODY_FP32_THREADS=256 in CMAKE_CUDA_FLAGS) to time
// variants with mpsbench-micro.
#ifndef MPSB_NBODY_FP32_THREADS
#define MPSB_NBODY_FP32_THREADS 512
#endif
#ifndef MPSB_NBODY_FP32_BODIES
#define MPSB_NBODY_FP32_BODIES 4
#endif
#ifndef MPSB_NBODY_FP32_UNROLL
#define MPSB_NBODY_FP32_UNROLL 32
#endif
#ifndef MPSB_NBODY_FP32_MIN_BLOCKS
#define MPSB_NBODY_FP32_MIN_BLOCKS 1
#endif
template <int Threads, int Bodies, int Unroll, int MinBlocks>
struct KernelShape {
  static constexpr int threads = Threads;
  static constexpr int bodies = Bodies;
  static constexpr int unroll = Unroll;
  static constexpr int min_blocks = MinBlocks;
};
// The shapes of each precision, preferred first (std::tuple of KernelShape).
using Fp32Shapes = std::tuple<KernelShape<MPSB_NBODY_FP32_THREADS, MPSB_NBODY_FP32_BODIES, MPSB_NBODY_FP32_UNROLL,
                                          MPSB_NBODY_FP32_MIN_BLOCKS>,
                              KernelShape<128, 4, 32, 4>, KernelShape<128, 1, 32, 4>>;
using Fp64Shapes = std::tuple<KernelShape<128, 2, 8, 4>, KernelShape<128, 1, 8, 4>>;

// Smallest tile of any shape: bounds the partial sums (max_slots).
constexpr int kMinTileThreads = std::apply(
    [](auto... s) { return std::min({decltype(s)::threads...}); }, std::tuple_cat(Fp32Shapes{}, Fp64Shapes{}));

// Chunks per resident block slot: 1 launches exactly one full wave, so every
// SM holds the same number of equal chunks and finishes with the others.
#ifndef MPSB_NBODY_WAVES
#define MPSB_NBODY_WAVES 1
#endif
constexpr std::int64_t kWaves = MPSB_NBODY_WAVES;
// Most partial sums one body can get (chunks touching one target block);
// sizes the partial-sum buffer.
constexpr std::int64_t kMaxSlots = 64;

// The work is a grid of units (target block, source tile): target block tb
// holds targets [tb * targets_per_block, +targets_per_block), tile t the
// sources [t * threads, +threads). Units are numbered tb * tiles + t and cut
// into `chunks` contiguous ranges whose sizes differ by at most one; block c
// of the force kernel does chunk c, one partial sum per target block it
// touches, stored in slot c - first_chunk(tb). The integrate kernel adds a
// body's slots in order, so the result is deterministic.
struct Schedule {
  std::int64_t n = 0;
  std::int64_t threads = 0;
  std::int64_t bodies_per_thread = 1;
  std::int64_t targets_per_block = 0;
  std::int64_t target_blocks = 0;
  std::int64_t tiles = 0;
  std::int64_t units = 0;
  std::int64_t chunks = 0;  // grid size of the force kernel
  std::int64_t slots = 0;   // partial sums per body at most, <= kMaxSlots
  int shape = 0;            // index of the kernel shape (plan_schedule's options)
};

inline std::int64_t ceil_div(std::int64_t a, std::int64_t b) { return (a + b - 1) / b; }

MPSB_HOST_DEVICE inline std::int64_t chunk_begin(const Schedule& s, std::int64_t c) {
  return c * s.units / s.chunks;
}
// The chunk holding unit u: the largest c with chunk_begin(c) <= u.
MPSB_HOST_DEVICE inline std::int64_t chunk_of(const Schedule& s, std::int64_t u) {
  return ((u + 1) * s.chunks - 1) / s.units;
}
MPSB_HOST_DEVICE inline std::int64_t first_chunk(const Schedule& s, std::int64_t tb) {
  return chunk_of(s, tb * s.tiles);
}
MPSB_HOST_DEVICE inline std::int64_t slot_count(const Schedule& s, std::int64_t tb) {
  return chunk_of(s, (tb + 1) * s.tiles - 1) - first_chunk(s, tb) + 1;
}

// Aims for `target_chunks` (one wave: SMs x resident blocks), fewer when N has
// fewer units, and chunks long enough that no body gets over kMaxSlots sums.
inline Schedule make_schedule(std::int64_t n, int threads, int bodies, std::int64_t target_chunks) {
  Schedule s;
  s.n = n;
  s.threads = threads;
  s.bodies_per_thread = bodies;
  s.targets_per_block = static_cast<std::int64_t>(threads) * bodies;
  s.target_blocks = ceil_div(n, s.targets_per_block);
  s.tiles = ceil_div(n, threads);
  s.units = s.target_blocks * s.tiles;
  const std::int64_t min_chunk_units = ceil_div(s.tiles, kMaxSlots - 1);
  s.chunks = std::max<std::int64_t>(1, std::min({target_chunks, s.units, s.units / min_chunk_units}));
  for (std::int64_t tb = 0; tb < s.target_blocks; ++tb) s.slots = std::max(s.slots, slot_count(s, tb));
  return s;
}

// One kernel shape a run may use, and how many of its blocks one SM holds.
struct ShapeOption {
  int threads = 0;
  int bodies = 1;
  int resident = 1;
};

// The shapes of list Shapes as plan_schedule options; resident(shape) gives
// the blocks of that shape one SM holds (the occupancy API on a device).
template <typename Shapes, typename Resident>
std::array<ShapeOption, std::tuple_size_v<Shapes>> shape_options(Resident resident) {
  return std::apply(
      [&](auto... s) {
        return std::array<ShapeOption, sizeof...(s)>{ShapeOption{decltype(s)::threads, decltype(s)::bodies, resident(s)}...};
      },
      Shapes{});
}

// The first of `options` (in order of preference) whose schedule fills at
// least half a wave (SMs x resident blocks); if none does, the one with the
// most chunks (the earliest on a tie).
template <typename Options>
Schedule plan_schedule(std::int64_t n, int sms, const Options& options) {
  Schedule best;
  bool have = false;
  int index = 0;
  for (const ShapeOption& o : options) {
    const std::int64_t target = std::int64_t{std::max(1, sms)} * std::max(1, o.resident) * kWaves;
    Schedule s = make_schedule(n, o.threads, o.bodies, target);
    s.shape = index++;
    if (2 * s.chunks >= target) return s;
    if (!have || s.chunks > best.chunks) best = s, have = true;
  }
  return best;
}

// Bound on Schedule::slots for any device and shape (device-memory preflight).
inline std::int64_t max_slots(std::int64_t n) { return std::min(kMaxSlots, ceil_div(n, kMinTileThreads)); }

}  // namespace mpsb::nbody
