// stream: the memory-bound STREAM triad a = b + s c (s = 3) over arrays of N
// elements (size = N), and the device-to-device copy it is compared with.
//
// Purpose: the bandwidth-bound control case of the suite. One rank with a full
//   grid already keeps device memory busy, so what sharing can change is only
//   how one fixed bandwidth is divided: the aggregate over ranks should stay
//   at (or, with context switching, below) the single-rank figure. MPS cannot
//   add bandwidth: it lets kernels of several processes occupy the SMs at the
//   same time, which helps kernels that leave SMs idle, but every rank's
//   loads and stores go through the same HBM (and L2), which one rank already
//   saturates. A run where stream's aggregate grows with ranks per GPU points
//   at an arrays-fit-in-L2 size or a measurement problem, not at MPS.
// Precisions: fp64  (triad over double arrays),
//             fp32  (triad over float arrays),
//             copy  (cudaMemcpyAsync device to device of one fp64 array of N
//                    elements: the copy bandwidth the triad is measured
//                    against, in the same sweep and under the same sharing).
// Counting rule (Work::bytes, the primary metric, in B/s): the triad moves 3
//   arrays per iteration, b and c read and a written: 3 N x element bytes
//   (24 N fp64, 12 N fp32); copy moves 2 N x 8 bytes. Write-allocate traffic
//   is not counted (GPU caches do not read a line that a store overwrites
//   whole; on the CPU device the real traffic can be 4/3 of the figure).
//   flops = 2 N for the triad (one multiply, one add per element), 0 for copy.
// Device memory: the arrays, 3 N x element bytes (triad) or 16 N (copy).
// The triad kernel (triad_kernel): 16-byte loads and stores (double2 /
//   float4; cudaMalloc aligns to 256 bytes), a grid-stride loop unrolled by 2
//   so each thread has 4 loads in flight, and the N mod W trailing elements
//   done by the first threads. Grid: SM count (cudaDevAttrMultiProcessorCount)
//   x resident blocks of 256 threads per SM (occupancy API): one full wave
//   that every SM works through to the end, and no more blocks than there are
//   vectors (32 registers: 8 blocks per SM on sm_90, no spills). The aim is
//   >= 90 % of copy's bandwidth on an H100 for one rank, i.e. what
//   cudaMemcpy's own kernel reaches; compare the fp64 and copy records.
// Inputs: generated on the device from the seed (stream_cpu.hpp, input_value)
//   in setup(), untimed; a starts as NaN and poison_outputs() refills it.
// Verification: exact (tolerance 0). The inputs make s c exact, so b + s c
//   rounds once whether compiled as an FMA or not and every correct
//   implementation is bit-identical to the float64 reference rounded to the
//   element type; copy must reproduce src. Every element for N <= 2^20, else
//   both ends plus 65536 seeded elements; every element must be finite. The
//   output is downloaded in 32 MiB chunks and the inputs regenerated, so no
//   host copy of the arrays is kept.
// Limits: N <= 2^31 - 1 (16 GiB per fp64 array, 48 GiB for the fp64 triad on
//   one rank); indices are 64-bit throughout. Sizes whose arrays fit in L2
//   (50 MB on an H100: N below ~2M for fp64) measure L2, not HBM, bandwidth.
#include <cuda_runtime.h>

#include <algorithm>
#include <vector>

#include "cuda_check.hpp"
#include "device_buffer.hpp"
#include "registry.hpp"
#include "stream_cpu.hpp"

namespace mpsb::stream {
namespace {

constexpr int kBlockThreads = 256;
constexpr int kUnroll = 2;
constexpr std::int64_t kMaxElements = (std::int64_t{1} << 31) - 1;
constexpr std::int64_t kDownloadChunk = std::int64_t{1} << 22;  // elements per verification download

// The 16-byte vector of each element type.
template <typename T>
struct Vec;
template <>
struct Vec<double> {
  using type = double2;
  static constexpr int width = 2;
};
template <>
struct Vec<float> {
  using type = float4;
  static constexpr int width = 4;
};

__device__ __forceinline__ double2 triad_vec(const double2& b, const double2& c) {
  return make_double2(triad_value(b.x, c.x), triad_value(b.y, c.y));
}
__device__ __forceinline__ float4 triad_vec(const float4& b, const float4& c) {
  return make_float4(triad_value(b.x, c.x), triad_value(b.y, c.y), triad_value(b.z, c.z), triad_value(b.w, c.w));
}

template <typename T>
__global__ void __launch_bounds__(kBlockThreads)
    triad_kernel(T* __restrict__ a, const T* __restrict__ b, const T* __restrict__ c, std::int64_t n) {
  using V = typename Vec<T>::type;
  constexpr int kWidth = Vec<T>::width;
  const std::int64_t vectors = n / kWidth;
  V* __restrict__ av = reinterpret_cast<V*>(a);
  const V* __restrict__ bv = reinterpret_cast<const V*>(b);
  const V* __restrict__ cv = reinterpret_cast<const V*>(c);
  const std::int64_t stride = static_cast<std::int64_t>(gridDim.x) * blockDim.x;
  const std::int64_t tid = static_cast<std::int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  std::int64_t i = tid;
  // All loads of a step issue before its stores: 2 kUnroll 16-byte loads in flight per thread.
  for (; i + (kUnroll - 1) * stride < vectors; i += kUnroll * stride) {
    V vb[kUnroll], vc[kUnroll];
#pragma unroll
    for (int u = 0; u < kUnroll; ++u) {
      vb[u] = bv[i + u * stride];
      vc[u] = cv[i + u * stride];
    }
#pragma unroll
    for (int u = 0; u < kUnroll; ++u) av[i + u * stride] = triad_vec(vb[u], vc[u]);
  }
  for (; i < vectors; i += stride) av[i] = triad_vec(bv[i], cv[i]);
  // The N mod kWidth trailing elements (fewer than kWidth threads).
  const std::int64_t t = vectors * kWidth + tid;
  if (t < n) a[t] = triad_value(b[t], c[t]);
}

template <typename T>
__global__ void __launch_bounds__(kBlockThreads) fill_kernel(T* __restrict__ out, std::int64_t n, std::uint64_t seed) {
  const std::int64_t stride = static_cast<std::int64_t>(gridDim.x) * blockDim.x;
  for (std::int64_t i = static_cast<std::int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < n; i += stride) {
    out[i] = static_cast<T>(input_value(seed, i));
  }
}

// One full wave of `kernel` on `device`: SMs x resident blocks per SM, but no
// more blocks than `threads` threads need (at least one). `sm_count` > 0: the
// SMs of this instance's green context, which the device attribute ignores.
template <typename Kernel>
int full_wave_grid(Kernel kernel, int device, int sm_count, std::int64_t threads) {
  int sms = sm_count, blocks_per_sm = 0;
  if (sms <= 0) MPSB_CUDA(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device));
  MPSB_CUDA(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&blocks_per_sm, kernel, kBlockThreads, 0));
  const std::int64_t wave = static_cast<std::int64_t>(std::max(sms, 1)) * std::max(blocks_per_sm, 1);
  const std::int64_t needed = (threads + kBlockThreads - 1) / kBlockThreads;
  return static_cast<int>(std::max<std::int64_t>(1, std::min(wave, needed)));
}

class StreamGpu final : public Workload {
 public:
  explicit StreamGpu(const WorkloadArgs& args)
      : precision_(args.precision),
        op_(op_for(args.precision)),
        n_(args.size),
        device_(args.gpu_ordinal),
        sm_count_(args.sm_count),
        stream_(args.stream) {}

  void setup(std::uint64_t seed) override {
    seed_ = seed;
    if (device_ < 0) MPSB_CUDA(cudaGetDevice(&device_));
    const std::size_t bytes = static_cast<std::size_t>(n_) * element_bytes(op_);
    a_ = DeviceBuffer(bytes);
    b_ = DeviceBuffer(bytes);
    switch (op_) {
      case Op::triad_fp64:
        c_ = DeviceBuffer(bytes);
        fill<double>(b_, seed_b(seed));
        fill<double>(c_, seed_c(seed));
        grid_ = full_wave_grid(triad_kernel<double>, device_, sm_count_, n_ / Vec<double>::width);
        break;
      case Op::triad_fp32:
        c_ = DeviceBuffer(bytes);
        fill<float>(b_, seed_b(seed));
        fill<float>(c_, seed_c(seed));
        grid_ = full_wave_grid(triad_kernel<float>, device_, sm_count_, n_ / Vec<float>::width);
        break;
      case Op::copy:
        fill<double>(b_, seed_src(seed));
        break;
    }
    poison_outputs();  // NaN (all bits set) in every element: an unrun workload fails verification
    sync();
  }

  void run() override {
    switch (op_) {
      case Op::triad_fp64:
        triad_kernel<double><<<grid_, kBlockThreads, 0, stream_>>>(a_.as<double>(), b_.as<double>(),
                                                                    c_.as<double>(), n_);
        MPSB_CUDA_LAUNCH();
        break;
      case Op::triad_fp32:
        triad_kernel<float><<<grid_, kBlockThreads, 0, stream_>>>(a_.as<float>(), b_.as<float>(), c_.as<float>(),
                                                                  n_);
        MPSB_CUDA_LAUNCH();
        break;
      case Op::copy:
        MPSB_CUDA(cudaMemcpyAsync(a_.as<void>(), b_.as<void>(), a_.bytes(), cudaMemcpyDeviceToDevice, stream_));
        break;
    }
  }

  void sync() override { MPSB_CUDA(cudaStreamSynchronize(stream_)); }

  void poison_outputs() override { MPSB_CUDA(cudaMemsetAsync(a_.as<void>(), 0xFF, a_.bytes(), stream_)); }

  Work work() const override { return work_per_iteration(precision_, n_); }

  Verification verify() override {
    sync();
    OutputChecker checker(op_, n_, seed_, seed_ + 1);
    const std::size_t element = element_bytes(op_);
    std::vector<double> host(static_cast<std::size_t>(std::min(n_, kDownloadChunk)));  // 8-byte slots fit either type
    for (std::int64_t begin = 0; begin < n_; begin += kDownloadChunk) {
      const std::int64_t count = std::min(kDownloadChunk, n_ - begin);
      const auto* src = a_.as<const unsigned char>() + static_cast<std::size_t>(begin) * element;
      MPSB_CUDA(cudaMemcpyAsync(host.data(), src, static_cast<std::size_t>(count) * element, cudaMemcpyDeviceToHost,
                                stream_));
      sync();
      checker.check(host.data(), begin, count);
    }
    return checker.result();
  }

 private:
  template <typename T>
  void fill(DeviceBuffer& buffer, std::uint64_t seed) {
    const int grid = full_wave_grid(fill_kernel<T>, device_, sm_count_, n_);
    fill_kernel<T><<<grid, kBlockThreads, 0, stream_>>>(buffer.as<T>(), n_, seed);
    MPSB_CUDA_LAUNCH();
  }

  std::string precision_;
  Op op_;
  std::int64_t n_;
  int device_;
  int sm_count_;
  cudaStream_t stream_;
  std::uint64_t seed_ = 0;
  int grid_ = 1;
  DeviceBuffer a_, b_, c_;  // copy: a_ = dst, b_ = src, no c_
};

KernelInfo stream_info() {
  KernelInfo info;
  info.name = "stream";
  info.summary = "STREAM triad a = b + 3 c (fp64, fp32) and D2D cudaMemcpy (copy); bytes = 3 N elements "
                 "(2 read + 1 write) triad, 2 N x 8 copy, no write-allocate; 2 N flops triad";
  info.suite_order = 35;
  info.precisions = {"fp64", "fp32", "copy"};
  info.default_precisions = {"fp64", "copy"};
  info.default_gpu_sizes = {std::int64_t{1} << 25};  // 256 MiB per fp64 array, far beyond the 50 MB L2
  info.default_cpu_sizes = {std::int64_t{1} << 20};
  info.max_size = kMaxElements;
  info.primary = PrimaryMetric::bytes;
  info.device_bytes = [](const std::string& precision, std::int64_t n, const KernelParams&) {
    return stream::device_bytes(precision, n);
  };
  info.make = [](const WorkloadArgs& args) -> std::unique_ptr<Workload> {
    if (args.device == DeviceKind::cpu) return make_cpu_workload(args);
    return std::make_unique<StreamGpu>(args);
  };
  return info;
}

}  // namespace
}  // namespace mpsb::stream

namespace mpsb::stream {
MPSB_REGISTER_KERNEL(stream_info);
}
