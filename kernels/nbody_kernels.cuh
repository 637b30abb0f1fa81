// The GPU side of the nbody workload (nbody.cu): the body layout, the
// interaction, and the force and integrate kernels. Included by nbody.cu only.
//
// Force kernel (why it is shaped this way): each thread keeps `bodies` target
// bodies in registers, so each source body read from shared memory (one
// LDS.128 broadcast, all lanes on one address) feeds that many interactions;
// sources are staged through shared memory one tile of `threads` bodies at a
// time, the next tile's global load issued before the current tile is
// consumed, two tile buffers so one barrier per tile suffices.
// Per-tile accumulators are added into the running sums after each tile:
// float errors then grow with sqrt(N / tile) instead of sqrt(N), for 3 FADD
// per target per tile. The grid is exactly one wave (SMs x resident blocks,
// from the occupancy API) and the (target block, source tile) units are
// shared out so that chunks differ by at most one tile, so no SM idles while
// another finishes a last block. A target block cut between chunks gets one
// partial sum per chunk, which the integrate kernel adds. Each precision has a
// short list of kernel shapes (threads x bodies); a run takes the first that
// fills half a wave at its N, so large N gets big tiles (fp32: 512 x 4) and
// small N more, smaller units. nbody_launch.hpp holds the tunables.
#pragma once

#include <cuda_runtime.h>

#include <cstdint>

#include "nbody_cpu.hpp"
#include "nbody_launch.hpp"

namespace mpsb::nbody::gpu {

constexpr int kIntegrateThreads = 256;

// float4 / double4 layout. Own type: CUDA 13 deprecates double4, and the
// alignment makes every body one (fp32) or two (fp64) 128-bit accesses.
template <typename T>
struct alignas(4 * sizeof(T)) Vec4 {
  T x, y, z, w;
};
static_assert(sizeof(Vec4<float>) == 4 * sizeof(float) && sizeof(Vec4<double>) == 4 * sizeof(double),
              "device bodies must match the host layout of 4 values per body");

// One MUFU.RSQ: the ftz form needs no denormal fix-up, and its input is never
// below eps^2 anyway.
__device__ __forceinline__ float fast_rsqrt(float x) {
  float r;
  asm("rsqrt.approx.ftz.f32 %0, %1;" : "=f"(r) : "f"(x));
  return r;
}
__device__ __forceinline__ double fast_rsqrt(double x) { return ::rsqrt(x); }

__device__ __forceinline__ float madd(float a, float b, float c) { return __fmaf_rn(a, b, c); }
__device__ __forceinline__ double madd(double a, double b, double c) { return __fma_rn(a, b, c); }

// 3 FADD, 3 FFMA, 1 rsqrt, 3 FMUL, 3 FFMA. The order of the operations
// (x first in d2, the mass first in s, z first in the sums) changes no
// rounding that matters but steers ptxas's register allocation, and so the
// bank conflicts (see the tile layout below): it was the fastest order timed
// at 512 x 4, 44.7 TFLOP/s against 43.1 for (m inv) (inv inv) (the nbody tuning
// log in git history, fifth run).
template <typename T>
__device__ __forceinline__ void interact(const Vec4<T>& q, T px, T py, T pz, T eps2, T& ax, T& ay, T& az) {
  const T dx = q.x - px, dy = q.y - py, dz = q.z - pz;
  const T d2 = madd(dz, dz, madd(dy, dy, madd(dx, dx, eps2)));
  const T inv = fast_rsqrt(d2);
  const T s = ((q.w * inv) * inv) * inv;
  az = madd(dz, s, az);
  ay = madd(dy, s, ay);
  ax = madd(dx, s, ax);
}

// Past the end: a massless body at the origin, whose term is exactly 0.
template <typename T>
__device__ __forceinline__ Vec4<T> load_source(const Vec4<T>* __restrict__ pos, int n, int j) {
  return j < n ? pos[j] : Vec4<T>{T(0), T(0), T(0), T(0)};
}

// Shared-memory staging of source tiles, double-buffered so one barrier per
// tile suffices: a buffer is rewritten only after the barrier that follows
// the reads of it.
//
// fp32 tiles hold each body mass first (m, x, y, z). Why: the kernel is
// issue-bound, and the lost issue cycles track register-bank conflicts under
// the two-bank model (even and odd register numbers, one read per bank per
// cycle) reverse-engineered for recent NVIDIA cores (Huerta et al., 2025). An
// LDS.128 fills four consecutive registers and the targets come from LDG.128
// the same way, so in x, y, z, m order every dx = q.x - p.x reads two
// registers of one bank; mass first puts q.x in the other bank. Same
// instructions, 41.5 -> 42.4 TFLOP/s at N = 262144 on an H200 (128 x 4
// shape; the nbody tuning log in git history, fifth run). fp64 values fill register pairs, one
// in each bank, so fp64 tiles keep the plain layout.
template <typename T>
constexpr bool kMassFirst = sizeof(T) == 4;

template <typename T>
__device__ __forceinline__ Vec4<T> to_tile(const Vec4<T>& b) {
  if constexpr (kMassFirst<T>) return Vec4<T>{b.w, b.x, b.y, b.z};
  return b;
}
template <typename T>
__device__ __forceinline__ Vec4<T> from_tile(const Vec4<T>& t) {
  if constexpr (kMassFirst<T>) return Vec4<T>{t.y, t.z, t.w, t.x};
  return t;
}

template <typename T, int kThreads>
struct SourceTiles {
  Vec4<T> body[2][kThreads];
};

// One target block's share of a chunk: its targets against source tiles
// [t_begin, t_end), summed into `out` (that chunk's slot). Thread t holds
// targets first + b * kThreads, so loads and stores coalesce.
template <typename T, int kThreads, int kBodies, int kUnroll>
__device__ __forceinline__ void target_block_segment(const Vec4<T>* __restrict__ pos, int n, int first, int t_begin,
                                                     int t_end, SourceTiles<T, kThreads>& tiles,
                                                     Vec4<T>* __restrict__ out) {
  const int tid = static_cast<int>(threadIdx.x);
  T px[kBodies], py[kBodies], pz[kBodies], ax[kBodies], ay[kBodies], az[kBodies];
#pragma unroll
  for (int b = 0; b < kBodies; ++b) {
    // Targets past the end duplicate body n-1 and are never stored.
    const Vec4<T> p = pos[min(first + b * kThreads, n - 1)];
    px[b] = p.x, py[b] = p.y, pz[b] = p.z;
    ax[b] = T(0), ay[b] = T(0), az[b] = T(0);
  }
  const T eps2 = static_cast<T>(kSoftening2);
  Vec4<T> staged = load_source(pos, n, t_begin * kThreads + tid);
  int buffer = 0;
  for (int t = t_begin; t < t_end; ++t, buffer ^= 1) {
    Vec4<T>* tile = tiles.body[buffer];
    tile[tid] = to_tile(staged);
    __syncthreads();
    if (t + 1 < t_end) staged = load_source(pos, n, (t + 1) * kThreads + tid);
    T tx[kBodies], ty[kBodies], tz[kBodies];
#pragma unroll
    for (int b = 0; b < kBodies; ++b) tx[b] = T(0), ty[b] = T(0), tz[b] = T(0);
#pragma unroll kUnroll
    for (int k = 0; k < kThreads; ++k) {
      const Vec4<T> q = from_tile(tile[k]);
#pragma unroll
      for (int b = 0; b < kBodies; ++b) interact(q, px[b], py[b], pz[b], eps2, tx[b], ty[b], tz[b]);
    }
#pragma unroll
    for (int b = 0; b < kBodies; ++b) ax[b] += tx[b], ay[b] += ty[b], az[b] += tz[b];
  }
  __syncthreads();  // the next segment restarts at buffer 0, which may still be read
#pragma unroll
  for (int b = 0; b < kBodies; ++b) {
    const int i = first + b * kThreads;
    if (i < n) out[i] = Vec4<T>{ax[b], ay[b], az[b], T(0)};
  }
}

// Block c does chunk c of the schedule (nbody_launch.hpp): the units
// [chunk_begin(c), chunk_begin(c + 1)), target block by target block. All
// bounds are uniform across the block, so every thread meets every barrier.
template <typename T, int kThreads, int kBodies, int kUnroll, int kMinBlocks>
__global__ void __launch_bounds__(kThreads, kMinBlocks)
    forces_kernel(const Vec4<T>* __restrict__ pos, const Schedule s, Vec4<T>* __restrict__ partial) {
  __shared__ SourceTiles<T, kThreads> tiles;
  const int n = static_cast<int>(s.n);
  const std::int64_t c = blockIdx.x;
  const std::int64_t end = chunk_begin(s, c + 1);
  for (std::int64_t u = chunk_begin(s, c); u < end;) {
    const std::int64_t tb = u / s.tiles;
    const std::int64_t t_begin = u - tb * s.tiles;
    const std::int64_t t_end = s.tiles < t_begin + (end - u) ? s.tiles : t_begin + (end - u);
    Vec4<T>* out = partial + static_cast<size_t>(c - first_chunk(s, tb)) * static_cast<size_t>(n);
    const int first = static_cast<int>(tb) * (kThreads * kBodies) + static_cast<int>(threadIdx.x);
    target_block_segment<T, kThreads, kBodies, kUnroll>(pos, n, first, static_cast<int>(t_begin),
                                                        static_cast<int>(t_end), tiles, out);
    u += t_end - t_begin;
  }
}

// Adds a body's partial sums in slot order (deterministic), keeps the
// acceleration for verification, and integrates (samples' integrateBodies).
template <typename T>
__global__ void __launch_bounds__(kIntegrateThreads)
    integrate_kernel(const Vec4<T>* __restrict__ partial, const Schedule s, const Vec4<T>* __restrict__ pos_in,
                     const Vec4<T>* __restrict__ vel_in, Vec4<T>* __restrict__ pos_out,
                     Vec4<T>* __restrict__ vel_out, Vec4<T>* __restrict__ acc) {
  const int n = static_cast<int>(s.n);
  const int i = static_cast<int>(blockIdx.x) * kIntegrateThreads + static_cast<int>(threadIdx.x);
  if (i >= n) return;
  const int slots = static_cast<int>(slot_count(s, i / s.targets_per_block));
  Vec4<T> a = partial[i];
  for (int k = 1; k < slots; ++k) {
    const Vec4<T> p = partial[static_cast<size_t>(k) * static_cast<size_t>(n) + static_cast<size_t>(i)];
    a.x += p.x, a.y += p.y, a.z += p.z;
  }
  a.w = T(0);
  const T dt = static_cast<T>(kTimeStep), damping = static_cast<T>(kDamping);
  Vec4<T> v = vel_in[i];
  v.x = (v.x + a.x * dt) * damping;
  v.y = (v.y + a.y * dt) * damping;
  v.z = (v.z + a.z * dt) * damping;
  Vec4<T> p = pos_in[i];
  p.x += v.x * dt, p.y += v.y * dt, p.z += v.z * dt;
  pos_out[i] = p;
  vel_out[i] = v;
  acc[i] = a;
}

}  // namespace mpsb::nbody::gpu
