// matmul: C = A * B for square N x N matrices through cuBLAS (cublasGemmEx).
//
// Precisions: fp32 (FP32 inputs, 32-bit compute, CUBLAS_DEFAULT_MATH: no TF32),
//             tf32 (FP32 storage, CUBLAS_COMPUTE_32F_FAST_TF32),
//             bf16 (BF16 A, B and C, FP32 accumulation).
// Work: 2 N^3 flops per iteration; bytes = 3 N^2 elements (A, B read, C written once).
// Device memory: 3 N^2 elements plus the cuBLAS workspace.
// Inputs: A and B made on the device from the seed (matmul_inputs.hpp), untimed; the
//               float64 reference makes the rows and columns it needs from the same definition.
// Verification: sampled entries of C (all of C for N <= 256) against a float64
//               CPU product of the same inputs, error relative to (|A||B|)_ij, and every entry
//               of C finite; both read on the device (matmul_check.hpp).
// Limits: N <= 46340 so N^2 fits a 32-bit cuBLAS leading-dimension product.
#include <cublas_v2.h>

#include <optional>
#include <vector>

#include "cuda_check.hpp"
#include "device_buffer.hpp"
#include "matmul_check.hpp"
#include "matmul_cpu.hpp"
#include "matmul_inputs.hpp"
#include "registry.hpp"

namespace mpsb::matmul {
namespace {

constexpr double kCublasWorkspaceBytes = 64.0 * 1024 * 1024;

class MatmulGpu final : public Workload {
 public:
  explicit MatmulGpu(const WorkloadArgs& args)
      : precision_(args.precision), n_(args.size), stream_(args.stream) {}

  ~MatmulGpu() override {
    if (handle_ != nullptr) cublasDestroy(handle_);
  }

  void setup(std::uint64_t seed) override {
    seed_ = seed;
    const auto count = static_cast<std::size_t>(n_ * n_);
    const auto bytes = count * static_cast<std::size_t>(element_bytes(precision_));
    a_ = DeviceBuffer(bytes);
    b_ = DeviceBuffer(bytes);
    c_ = DeviceBuffer(bytes);
    const bool bf16 = precision_ == "bf16";
    fill_on_device(a_.as<void>(), bf16, count, operand_seed(seed, Operand::a), stream_);
    fill_on_device(b_.as<void>(), bf16, count, operand_seed(seed, Operand::b), stream_);
    // Poison C with NaN (0xFF bytes) so an entry nothing wrote cannot pass.
    MPSB_CUDA(cudaMemsetAsync(c_.as<void>(), 0xFF, bytes, stream_));
    MPSB_CUBLAS(cublasCreate(&handle_));
    MPSB_CUBLAS(cublasSetStream(handle_, stream_));
    MPSB_CUBLAS(cublasSetMathMode(handle_, CUBLAS_DEFAULT_MATH));
    type_ = precision_ == "bf16" ? CUDA_R_16BF : CUDA_R_32F;
    compute_ = precision_ == "tf32" ? CUBLAS_COMPUTE_32F_FAST_TF32 : CUBLAS_COMPUTE_32F;
    MPSB_CUDA(cudaStreamSynchronize(stream_));
  }

  void run() override {
    const float alpha = 1.0f, beta = 0.0f;
    const int n = static_cast<int>(n_);
    // Row-major C = A B is column-major C^T = B^T A^T: pass B first.
    MPSB_CUBLAS(cublasGemmEx(handle_, CUBLAS_OP_N, CUBLAS_OP_N, n, n, n, &alpha, b_.as<void>(), type_, n,
                             a_.as<void>(), type_, n, &beta, c_.as<void>(), type_, n, compute_,
                             CUBLAS_GEMM_DEFAULT));
  }

  void sync() override { MPSB_CUDA(cudaStreamSynchronize(stream_)); }

  void poison_outputs() override { MPSB_CUDA(cudaMemsetAsync(c_.as<void>(), 0xFF, c_.bytes(), stream_)); }

  Work work() const override {
    const double n = static_cast<double>(n_);
    return Work{2.0 * n * n * n, 3.0 * n * n * element_bytes(precision_), 0, ""};
  }

  Verification verify() override {
    if (!reference_) {  // once: verified again when kept
      reference_ = product_reference(precision_, n_, seed_, seed_ + 1);
      entry_indices_.clear();
      for (const auto& e : reference_->entries) entry_indices_.push_back(e.i * n_ + e.j);
    }
    sync();
    return check_product(*reference_, n_,
                         check_on_device(c_.as<void>(), n_, precision_ == "bf16", entry_indices_, stream_), precision_);
  }

 private:
  std::string precision_;
  std::int64_t n_;
  cudaStream_t stream_;
  std::uint64_t seed_ = 0;
  std::optional<ProductReference> reference_;
  std::vector<std::int64_t> entry_indices_;  // the reference's entries as i * N + j
  DeviceBuffer a_, b_, c_;
  cublasHandle_t handle_ = nullptr;
  cudaDataType_t type_ = CUDA_R_32F;
  cublasComputeType_t compute_ = CUBLAS_COMPUTE_32F;
};

KernelInfo matmul_info() {
  KernelInfo info;
  info.name = "matmul";
  info.summary = "C = A B, square N x N, cuBLAS GEMM (fp32, tf32, bf16); 2 N^3 flops";
  info.suite_order = 10;
  info.precisions = {"fp32", "tf32", "bf16"};
  info.default_precisions = info.precisions;
  info.default_gpu_sizes = {512, 1024, 2048, 4096, 8192};
  info.default_cpu_sizes = {64, 128, 256};
  info.max_size = 46340;
  info.primary = PrimaryMetric::flops;
  info.device_bytes = [](const std::string& precision, std::int64_t n, const KernelParams&) {
    const double nn = static_cast<double>(n);
    return 3.0 * nn * nn * element_bytes(precision) + kCublasWorkspaceBytes;
  };
  info.make = [](const WorkloadArgs& args) -> std::unique_ptr<Workload> {
    if (args.device == DeviceKind::cpu) return make_cpu_workload(args);
    return std::make_unique<MatmulGpu>(args);
  };
  return info;
}

}  // namespace
}  // namespace mpsb::matmul

namespace mpsb::matmul {
MPSB_REGISTER_KERNEL(matmul_info);
}
