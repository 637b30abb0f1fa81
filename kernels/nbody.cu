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
// The kernels and why they are shaped as they are: nbody_kernels.cuh; the
// schedule and the kernel shapes: nbody_launch.hpp.
#include <cuda_runtime.h>

#include <stdexcept>
#include <tuple>
#include <type_traits>
#include <utility>
#include <vector>

#include "cuda_check.hpp"
#include "device_buffer.hpp"
#include "nbody_cpu.hpp"
#include "nbody_kernels.cuh"
#include "nbody_launch.hpp"
#include "registry.hpp"

namespace mpsb::nbody {
namespace {
using gpu::Vec4;
using gpu::forces_kernel;
using gpu::integrate_kernel;
using gpu::kIntegrateThreads;

// Kernel shapes of precision T, preferred first (nbody_launch.hpp).
template <typename T>
using ShapesOf = std::conditional_t<sizeof(T) == 4, Fp32Shapes, Fp64Shapes>;
template <typename T>
constexpr std::size_t kShapeCount = std::tuple_size_v<ShapesOf<T>>;
template <typename T, std::size_t I>
using ShapeAt = std::tuple_element_t<I, ShapesOf<T>>;

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
template <typename T>
auto shape_options_on_device() {
  return shape_options<ShapesOf<T>>([](auto shape) {
    using Shape = decltype(shape);
    int blocks = 0;
    MPSB_CUDA(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&blocks, forces_kernel_of<T, Shape>, Shape::threads, 0));
    return blocks;
  });
}

template <typename T>
class NbodyGpu final : public Workload {
  using Shapes = std::make_index_sequence<kShapeCount<T>>;

 public:
  explicit NbodyGpu(const WorkloadArgs& args)
      : precision_(args.precision),
        n_(args.size),
        stream_(args.stream),
        device_(args.gpu_ordinal),
        sm_count_(args.sm_count) {}

  void setup(std::uint64_t seed) override {
    seed_ = seed;
    int device = device_;
    if (device < 0) MPSB_CUDA(cudaGetDevice(&device));
    // A green context's SMs (--mode green) where given: the device attribute counts all of them, and a
    // schedule sized for 132 SMs on a 64-SM partition runs a ragged extra wave.
    int sms = sm_count_;
    if (sms <= 0) MPSB_CUDA(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device));
    schedule_ = plan_schedule(n_, sms, shape_options_on_device<T>());

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
  int sm_count_;
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
  info.device_bytes = [](const std::string& precision, std::int64_t n, const KernelParams&) {
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
