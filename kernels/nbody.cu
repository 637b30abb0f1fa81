// nbody: all-pairs gravitational accelerations of N bodies plus one
// integration step, as the CUDA samples' `nbody -benchmark`.
//
// Precisions: fp32 (float4 bodies, rsqrt.approx.ftz.f32 = one MUFU.RSQ),
//             fp64 (double4-layout bodies, full-precision rsqrt()).
// Physics: G = 1, eps^2 = 0.01, dt = 0.016, damping 1 (nbody_cpu.hpp).
//   a_i = sum_j m_j r_ij (|r_ij|^2 + eps^2)^-1.5 over all j, i included (its
//   term is exactly 0: r_ii = 0), then v' = (v + a dt) damping, p' = p + v' dt.
// One iteration (run()) = the force kernel, then the integrate kernel, both on
// the harness stream; positions and velocities ping-pong between two buffers
// so every iteration reads what the previous one wrote and the last step's
// inputs survive for verification.
// Work: N^2 interactions; 20 flops per interaction for fp32, 30 for fp64 (the
//       samples' convention; the fp32 interaction is 12 FP32 instructions, 9
//       of them FFMA-class, plus one MUFU.RSQ). bytes = positions and
//       velocities read and written once (64 N fp32, 128 N fp64): the minimal
//       traffic; the real traffic adds the tiles each block re-reads from L2
//       and the partial sums, both small next to the N^2 arithmetic.
// Device memory: 4 N elements each for 2 x positions, 2 x velocities, the
//       accelerations, and up to min(64, N/128) partial-sum arrays.
// Verification: the last step's accelerations of all bodies (N <= 2048) or
//       of a seeded sample, against a float64 reference computed from that
//       step's own input positions; error = |a - a_ref| / sum_j |a_ij|;
//       every output finite; the checked bodies' new velocity and position
//       consistent with their acceleration (nbody_cpu.hpp, verify_step).
// Limits: N <= 4194304 (2^22): indices stay far inside int, partial sums are
//       indexed in size_t, and one fp32 step is already ~8 s on an H100.
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
#include <cuda_runtime.h>

#include <array>
#include <stdexcept>
#include <tuple>
#include <utility>
#include <vector>

#include "check.hpp"
#include "device_buffer.hpp"
#include "nbody_cpu.hpp"
#include "nbody_launch.hpp"
#include "registry.hpp"

namespace mpsb::nbody {
namespace {

constexpr int kIntegrateThreads = 256;

// float4 / double4 layout. Own type: CUDA 13 deprecates double4, and the
// alignment makes every body one (fp32) or two (fp64) 128-bit accesses.
template <typename T>
struct alignas(4 * sizeof(T)) Vec4 {
  T x, y, z, w;
};
static_assert(sizeof(Vec4<float>) == 4 * sizeof(float) && sizeof(Vec4<double>) == 4 * sizeof(double),
              "device bodies must match the host layout of 4 values per body");

// Kernel shapes per precision, preferred first (nbody_launch.hpp).
template <typename T>
struct ShapesOf;
template <>
struct ShapesOf<float> {
  using type = std::tuple<KernelShape<MPSB_NBODY_FP32_THREADS, MPSB_NBODY_FP32_BODIES, MPSB_NBODY_FP32_UNROLL,
                                      MPSB_NBODY_FP32_MIN_BLOCKS>,
                          KernelShape<128, 4, 32, 4>, KernelShape<128, 1, 32, 4>>;
};
template <>
struct ShapesOf<double> {
  using type = std::tuple<KernelShape<128, 2, 8, 4>, KernelShape<128, 1, 8, 4>>;
};
template <typename T>
constexpr std::size_t kShapeCount = std::tuple_size_v<typename ShapesOf<T>::type>;
template <typename T, std::size_t I>
using ShapeAt = std::tuple_element_t<I, typename ShapesOf<T>::type>;

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
// at 512 x 4, 44.7 TFLOP/s against 43.1 for (m inv) (inv inv) (nbody-tuning.txt,
// fifth run).
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
// shape; nbody-tuning.txt, fifth run). fp64 values fill register pairs, one
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

template <typename T, typename Shape>
constexpr auto forces_kernel_of = forces_kernel<T, Shape::threads, Shape::bodies, Shape::unroll, Shape::min_blocks>;

// The force kernel of schedule s's shape.
template <typename T, std::size_t... I>
void launch_forces(const Vec4<T>* pos, const Schedule& s, Vec4<T>* partial, cudaStream_t stream,
                   std::index_sequence<I...>) {
  const auto launch = [&](auto shape) {
    using Shape = decltype(shape);
    forces_kernel_of<T, Shape><<<static_cast<unsigned>(s.chunks), Shape::threads, 0, stream>>>(pos, s, partial);
  };
  ((s.shape == static_cast<int>(I) ? launch(ShapeAt<T, I>{}) : void()), ...);
}

// Every shape of precision T with the blocks of it one SM holds at once.
template <typename T, std::size_t... I>
std::array<ShapeOption, sizeof...(I)> shape_options(std::index_sequence<I...>) {
  const auto option = [](auto shape) {
    using Shape = decltype(shape);
    int blocks = 0;
    MPSB_CUDA(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&blocks, forces_kernel_of<T, Shape>, Shape::threads, 0));
    return ShapeOption{Shape::threads, Shape::bodies, blocks};
  };
  return {option(ShapeAt<T, I>{})...};
}

template <typename T>
class NbodyGpu final : public Workload {
  using Shapes = std::make_index_sequence<kShapeCount<T>>;

 public:
  explicit NbodyGpu(const WorkloadArgs& args)
      : precision_(args.precision), n_(args.size), stream_(args.stream), device_(args.gpu_ordinal) {}

  void setup(std::uint64_t seed) override {
    seed_ = seed;
    int device = device_;
    if (device < 0) MPSB_CUDA(cudaGetDevice(&device));
    int sms = 0;
    MPSB_CUDA(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device));
    schedule_ = plan_schedule(n_, sms, shape_options<T>(Shapes{}));

    const Bodies<T> bodies = make_bodies<T>(n_, seed);
    const size_t bytes = static_cast<size_t>(n_) * sizeof(Vec4<T>);
    for (int k = 0; k < 2; ++k) {
      pos_[k] = DeviceBuffer(bytes);
      vel_[k] = DeviceBuffer(bytes);
    }
    acc_ = DeviceBuffer(bytes);
    partial_ = DeviceBuffer(bytes * static_cast<size_t>(schedule_.slots));
    MPSB_CUDA(cudaMemcpyAsync(pos_[0].as<void>(), bodies.pos.data(), bytes, cudaMemcpyHostToDevice, stream_));
    MPSB_CUDA(cudaMemcpyAsync(vel_[0].as<void>(), bodies.vel.data(), bytes, cudaMemcpyHostToDevice, stream_));
    // NaN (0xFF bytes) everywhere no step has written: an un-run workload fails.
    for (DeviceBuffer* b : {&pos_[1], &vel_[1], &acc_, &partial_}) {
      MPSB_CUDA(cudaMemsetAsync(b->as<void>(), 0xFF, b->bytes(), stream_));
    }
    MPSB_CUDA(cudaStreamSynchronize(stream_));
    in_ = 0;
  }

  void run() override {
    const int out = in_ ^ 1;
    const auto* pos = pos_[in_].as<const Vec4<T>>();
    auto* partial = partial_.as<Vec4<T>>();
    launch_forces(pos, schedule_, partial, stream_, Shapes{});
    MPSB_CUDA_LAUNCH();
    const auto blocks = static_cast<unsigned>(ceil_div(n_, kIntegrateThreads));
    integrate_kernel<T><<<blocks, kIntegrateThreads, 0, stream_>>>(
        partial, schedule_, pos, vel_[in_].as<const Vec4<T>>(), pos_[out].as<Vec4<T>>(), vel_[out].as<Vec4<T>>(),
        acc_.as<Vec4<T>>());
    MPSB_CUDA_LAUNCH();
    in_ = out;
  }

  void sync() override { MPSB_CUDA(cudaStreamSynchronize(stream_)); }

  Work work() const override { return step_work(precision_, n_); }

  std::vector<std::pair<std::string, double>> details() const override {
    return {{"force_blocks", static_cast<double>(schedule_.chunks)},
            {"force_threads_per_block", static_cast<double>(schedule_.threads)},
            {"force_targets_per_thread", static_cast<double>(schedule_.bodies_per_thread)},
            {"force_max_partial_sums", static_cast<double>(schedule_.slots)}};
  }

  Verification verify() override {
    sync();
    const int last_in = in_ ^ 1;  // before any run(): the poisoned buffers, which fail
    const std::vector<T> pos_in = download(pos_[last_in]), vel_in = download(vel_[last_in]);
    const std::vector<T> acc = download(acc_), pos_out = download(pos_[in_]), vel_out = download(vel_[in_]);
    StepView<T> view;
    view.n = n_;
    view.pos_in = pos_in.data();
    view.vel_in = vel_in.data();
    view.acc = acc.data();
    view.pos_out = pos_out.data();
    view.vel_out = vel_out.data();
    return verify_step(view, seed_ + 1);
  }

 private:
  std::vector<T> download(const DeviceBuffer& buffer) {
    std::vector<T> host(static_cast<size_t>(4 * n_));
    MPSB_CUDA(cudaMemcpyAsync(host.data(), buffer.as<void>(), host.size() * sizeof(T), cudaMemcpyDeviceToHost,
                              stream_));
    MPSB_CUDA(cudaStreamSynchronize(stream_));
    return host;
  }

  std::string precision_;
  std::int64_t n_;
  cudaStream_t stream_;
  int device_;
  std::uint64_t seed_ = 0;
  Schedule schedule_;
  DeviceBuffer pos_[2], vel_[2], acc_, partial_;
  int in_ = 0;  // index of the positions and velocities the next step reads
};

KernelInfo nbody_info() {
  KernelInfo info;
  info.name = "nbody";
  info.summary = "all-pairs gravity + integration step, N bodies (fp32, fp64); N^2 interactions, 20 / 30 flops each";
  info.suite_order = 20;
  info.precisions = {"fp32", "fp64"};
  info.default_precisions = {"fp32"};
  info.default_gpu_sizes = {4096, 16384, 65536};
  info.default_cpu_sizes = {256, 512};  // O(N^2) on one core
  info.max_size = std::int64_t{1} << 22;
  info.primary = PrimaryMetric::flops;
  info.device_bytes = [](const std::string& precision, std::int64_t n) {
    const double arrays = 5.0 + static_cast<double>(max_slots(n));
    return arrays * 4.0 * static_cast<double>(n) * element_bytes(precision);
  };
  info.make = [](const WorkloadArgs& args) -> std::unique_ptr<Workload> {
    if (args.device == DeviceKind::cpu) return make_cpu_workload(args);
    if (args.precision == "fp64") return std::make_unique<NbodyGpu<double>>(args);
    if (args.precision == "fp32") return std::make_unique<NbodyGpu<float>>(args);
    throw std::invalid_argument("nbody: unsupported precision " + args.precision);
  };
  return info;
}

}  // namespace
}  // namespace mpsb::nbody

namespace mpsb::nbody {
MPSB_REGISTER_KERNEL(nbody_info);
}
