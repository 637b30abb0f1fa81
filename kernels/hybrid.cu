// hybrid: a CPU-heavy application with small, frequent GPU offloads, the kind
// the MPS guides say gains most from sharing a GPU. Each rank runs one
// operator-split reaction-diffusion field of N cells (size = N):
//   1. CPU phase, one thread: `sweeps` relaxation sweeps (diffusion plus a
//      pull toward a fixed random forcing) of the previous offload's output,
//      written into a pinned host buffer: a true data dependency.
//   2. cudaMemcpyAsync of the N cells host -> device on the harness stream.
//   3. Kernel: every cell integrates du/dt = u (1 - u) (u - 0.3) over unit
//      time with 256 RK4 steps (compute-bound: 7168 flops per cell).
//   4. cudaMemcpyAsync device -> host, cudaStreamSynchronize: run() blocks,
//      because step 1 of the next iteration consumes the result.
//
// CPU/GPU balance: the harness passes one size (N), so the CPU share rides on
// the precision name (both do fp32 arithmetic):
//   fp32            1 sweep per iteration (M = N cell updates): about as long
//                   as the offload on one H100 with one host core;
//   fp32-cpu-heavy  4 sweeps (M = 4 N): the CPU phase takes ~4x the offload.
// Why one sweep balances: a sweep costs ~0.45-0.7 ns per cell on one core; the
// offload costs ~0.16 ns per cell of PCIe Gen5 copies plus ~0.19 ns per cell
// of kernel (256 RK4 steps), plus ~20 us of launch and copy latency. Both
// grow linearly with N, so the ratio holds across sizes; kReactionSteps in
// hybrid_cpu.hpp is the knob if details() shows otherwise on a new machine.
// On --device cpu the offload runs scalar on the host (~7 us per cell) and
// dominates: that device exercises the harness, not the balance.
//
// Work: 1 item ("iteration") per run(), the primary metric (iterations/s);
//       flops = N (8 sweeps + 7168), CPU and GPU parts as written in source;
//       bytes = 8 N: the host -> device and device -> host copies.
// Memory: device 8 N bytes; host 12 N pinned (16 N for fp32-cpu-heavy) in one
//       block: prev (the last offload result), forcing, input (the next
//       offload input) and scratch each start a page boundary plus 0, 1, 2
//       and 3 KiB (staggered_host_arrays.hpp). The sweep's speed depends on
//       these offsets modulo 4 KiB alone (4K aliasing between its load and
//       store streams: 0.3-0.5 or 1.4-2.2 ns per cell on the H200 host), and
//       heap-placed arrays gave every process its own, 2-6x apart.
// details(): cpu_phase_s (step 1) and gpu_phase_s (steps 2-4, wall clock as
//       the CPU thread sees it, so launch and synchronization latency and any
//       wait for a GPU shared with other ranks count), the mean per iteration
//       over every run() since setup except the first (warm-up).
// Verification: the last iteration's offload, recomputed from the last input
//       (still in the pinned buffer) in float64: every cell for N <= 4096,
//       else both ends plus 4096 seeded cells; error |out - ref| / max(|ref|, 1)
//       against 3.1e-5; any non-finite output fails. The host copy of the result
//       must equal the device's, so a missing copy back fails too.
// Limits: N <= 2^28 (1 GiB per buffer).
#include <cuda_runtime.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstring>
#include <memory>
#include <vector>

#include "cuda_check.hpp"
#include "device_buffer.hpp"
#include "hybrid_cpu.hpp"
#include "registry.hpp"

namespace mpsb::hybrid {
namespace {

constexpr int kBlockThreads = 256;
constexpr std::int64_t kMaxCells = std::int64_t{1} << 28;

__global__ void react_kernel(const float* __restrict__ in, float* __restrict__ out, std::int64_t n) {
  const std::int64_t stride = static_cast<std::int64_t>(blockDim.x) * gridDim.x;
  for (std::int64_t i = static_cast<std::int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < n; i += stride) {
    out[i] = react(in[i]);
  }
}

class HybridGpu final : public HybridWorkload {
 public:
  explicit HybridGpu(const WorkloadArgs& args)
      : n_(args.size), sweeps_(sweeps_for(args.precision)), stream_(args.stream) {}

  void setup(std::uint64_t seed) override {
    seed_ = seed;
    const auto count = static_cast<std::size_t>(n_);
    const std::size_t bytes = count * sizeof(float);
    host_ = CpuPhaseArrays(n_, sweeps_, HostMemory::pinned);
    fill_initial(host_.prev(), host_.forcing(), n_, seed);
    if (host_.scratch() != nullptr) std::fill(host_.scratch(), host_.scratch() + n_, 0.0f);
    std::fill(host_.input(), host_.input() + n_, NAN);
    d_in_ = DeviceBuffer(bytes);
    d_out_ = DeviceBuffer(bytes);
    // NaN (0xFF bytes) in both: a skipped copy-in or kernel cannot pass.
    MPSB_CUDA(cudaMemsetAsync(d_in_.as<void>(), 0xFF, bytes, stream_));
    MPSB_CUDA(cudaMemsetAsync(d_out_.as<void>(), 0xFF, bytes, stream_));
    MPSB_CUDA(cudaStreamSynchronize(stream_));
    phases_ = PhaseClock{};
  }

  void run() override {
    const std::size_t bytes = static_cast<std::size_t>(n_) * sizeof(float);
    const auto t0 = PhaseClock::clock::now();
    cpu_step(host_.prev(), host_.forcing(), host_.input(), host_.scratch(), n_, sweeps_);
    const auto t1 = PhaseClock::clock::now();
    MPSB_CUDA(cudaMemcpyAsync(d_in_.as<void>(), host_.input(), bytes, cudaMemcpyHostToDevice, stream_));
    const auto blocks = static_cast<unsigned>((n_ + kBlockThreads - 1) / kBlockThreads);
    react_kernel<<<blocks, kBlockThreads, 0, stream_>>>(d_in_.as<const float>(), d_out_.as<float>(), n_);
    MPSB_CUDA_LAUNCH();
    MPSB_CUDA(cudaMemcpyAsync(host_.prev(), d_out_.as<const void>(), bytes, cudaMemcpyDeviceToHost, stream_));
    MPSB_CUDA(cudaStreamSynchronize(stream_));
    phases_.add(t1 - t0, PhaseClock::clock::now() - t1);
  }

  void sync() override { MPSB_CUDA(cudaStreamSynchronize(stream_)); }

  Work work() const override { return work_per_iteration(n_, sweeps_); }

  Verification verify() override {
    sync();
    std::vector<float> out(static_cast<std::size_t>(n_));
    MPSB_CUDA(cudaMemcpy(out.data(), d_out_.as<const void>(), out.size() * sizeof(float), cudaMemcpyDeviceToHost));
    Verification v = verify_reaction(host_.input(), out.data(), n_, seed_ + 1);
    if (v.ok && std::memcmp(out.data(), host_.prev(), out.size() * sizeof(float)) != 0) {
      v.ok = false;
      v.detail = "the host copy of the offload result differs from the device's (copy back missing?)";
    }
    return v;
  }

  std::vector<std::pair<std::string, double>> details() const override { return phases_.details(); }
  void restart_details() override { phases_.restart(); }
  const float* last_input() const override { return host_.input(); }

 private:
  std::int64_t n_;
  int sweeps_;
  cudaStream_t stream_;
  std::uint64_t seed_ = 0;
  CpuPhaseArrays host_;  // pinned: prev (the last offload result) and input (the last offload input) are copied
  DeviceBuffer d_in_, d_out_;
  PhaseClock phases_;
};

KernelInfo hybrid_info() {
  KernelInfo info;
  info.name = "hybrid";
  info.summary = "per iteration: CPU sweep of N cells, then GPU offload (copy in, RK4, copy out); fp32 balanced, "
                 "fp32-cpu-heavy 4x CPU work";
  info.suite_order = 30;
  info.precisions = {"fp32", "fp32-cpu-heavy"};
  info.default_precisions = info.precisions;
  info.default_gpu_sizes = {65536, 262144, 1048576};
  // On the CPU the offload costs ~7 us per cell (scalar RK4), so these stay small.
  info.default_cpu_sizes = {256, 1024, 4096};
  info.max_size = kMaxCells;
  info.primary = PrimaryMetric::items;
  info.device_bytes = [](const std::string&, std::int64_t n, const KernelParams&) { return 2.0 * kElementBytes * static_cast<double>(n); };
  info.make = [](const WorkloadArgs& args) -> std::unique_ptr<Workload> {
    if (args.device == DeviceKind::cpu) return make_cpu_workload(args);
    return std::make_unique<HybridGpu>(args);
  };
  return info;
}

}  // namespace
}  // namespace mpsb::hybrid

namespace mpsb::hybrid {
MPSB_REGISTER_KERNEL(hybrid_info);
}
