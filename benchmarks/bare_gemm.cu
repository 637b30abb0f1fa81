// bare-gemm: one cublasGemmEx of an N x N x N product, nothing around it,
// timed with the mpsbench harness's protocol (warm-up, calibrated batch,
// wall-clock windows closed by a stream synchronize, median over windows).
// Its throughput is the yardstick for the suite's single-rank matmul: the
// call, the handle settings, the stream flags and the input data are the
// ones kernels/matmul.cu uses for rank 0 at the default seed.
#include <cublas_v2.h>
#include <cuda_bf16.h>
#include <cuda_runtime_api.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <iostream>
#include <sstream>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "cuda_check.hpp"
#include "device_buffer.hpp"
#include "random_inputs.hpp"
#include "runtime/values.hpp"

namespace {

constexpr std::int64_t kMaxIterations = 1'000'000'000;  // as the harness
constexpr std::uint64_t kSeed = 1;                      // the harness's default seed, rank 0

using mpsb::UsageError;

struct Options {
  std::vector<std::string> precisions{"fp32", "tf32", "bf16"};
  std::vector<long long> sizes{8192};
  double min_time_s = 0.25;
  long long repetitions = 5;
};

const char* kUsage =
    "usage: bare-gemm [--precision fp32,tf32,bf16] [--size 8192,...] [--min-time S] [--repetitions R]\n"
    "Times a bare cublasGemmEx (the call kernels/matmul.cu makes) with mpsbench's protocol\n"
    "and prints the median TFLOP/s over R windows of at least S seconds (defaults 5, 0.25).\n";

double number(const std::string& flag, const std::string& text, double lo, double hi) {
  errno = 0;
  char* end = nullptr;
  const double value = std::strtod(text.c_str(), &end);
  if (text.empty() || end != text.c_str() + text.size() || errno == ERANGE || !(value >= lo && value <= hi)) {
    char range[64];
    std::snprintf(range, sizeof range, "[%g, %g]", lo, hi);
    throw UsageError(flag + ": '" + text + "' is not a number in " + range);
  }
  return value;
}

long long integer(const std::string& flag, const std::string& text, long long lo, long long hi) {
  const double value = number(flag, text, static_cast<double>(lo), static_cast<double>(hi));
  if (value != std::floor(value)) throw UsageError(flag + ": '" + text + "' is not an integer");
  return static_cast<long long>(value);
}

Options parse(int argc, char** argv) {
  Options opt;
  for (int i = 1; i < argc; ++i) {
    std::string flag = argv[i], value;
    if (flag == "-h" || flag == "--help") {
      std::cout << kUsage;
      std::exit(0);
    }
    if (const auto eq = flag.find('='); eq != std::string::npos) {
      value = flag.substr(eq + 1);
      flag.resize(eq);
    } else if (i + 1 < argc) {
      value = argv[++i];
    } else {
      throw UsageError(flag + ": missing value");
    }
    if (flag == "--precision") {
      opt.precisions = mpsb::split_list(flag, value);
      for (const auto& p : opt.precisions) {
        if (p != "fp32" && p != "tf32" && p != "bf16") {
          throw UsageError("--precision: '" + p + "' is not fp32, tf32, bf16");
        }
      }
    } else if (flag == "--size") {
      opt.sizes.clear();
      for (const auto& s : mpsb::split_list(flag, value)) opt.sizes.push_back(integer(flag, s, 1, 46340));
    } else if (flag == "--min-time") {
      opt.min_time_s = number(flag, value, 1e-6, 3600);
    } else if (flag == "--repetitions") {
      opt.repetitions = integer(flag, value, 1, 1000);
    } else {
      throw UsageError("unknown option '" + flag + "'");
    }
  }
  return opt;
}

double now_seconds() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

class Gemm {
 public:
  Gemm(const std::string& precision, int n, cudaStream_t stream) : precision_(precision), n_(n), stream_(stream) {
    const auto count = static_cast<std::size_t>(n) * static_cast<std::size_t>(n);
    a_ = random_matrix(count, kSeed);
    b_ = random_matrix(count, kSeed ^ 0x5DEECE66Dull);  // matmul's seed for B
    const std::size_t bytes = count * (bf16() ? sizeof(__nv_bfloat16) : sizeof(float));
    da_ = mpsb::DeviceBuffer(bytes);
    db_ = mpsb::DeviceBuffer(bytes);
    dc_ = mpsb::DeviceBuffer(bytes);
    upload(a_, da_);
    upload(b_, db_);
    MPSB_CUDA(cudaMemsetAsync(dc_.as<void>(), 0xFF, bytes, stream_));  // NaN: an unwritten C cannot pass
    MPSB_CUBLAS(cublasCreate(&handle_));
    MPSB_CUBLAS(cublasSetStream(handle_, stream_));
    MPSB_CUBLAS(cublasSetMathMode(handle_, CUBLAS_DEFAULT_MATH));
    MPSB_CUDA(cudaStreamSynchronize(stream_));
  }
  ~Gemm() { cublasDestroy(handle_); }
  Gemm(const Gemm&) = delete;
  Gemm& operator=(const Gemm&) = delete;

  void run() {
    const float alpha = 1.0f, beta = 0.0f;
    const cudaDataType_t type = bf16() ? CUDA_R_16BF : CUDA_R_32F;
    const cublasComputeType_t compute = precision_ == "tf32" ? CUBLAS_COMPUTE_32F_FAST_TF32 : CUBLAS_COMPUTE_32F;
    // Row-major C = A B is column-major C^T = B^T A^T: B goes first, as in matmul.cu.
    MPSB_CUBLAS(cublasGemmEx(handle_, CUBLAS_OP_N, CUBLAS_OP_N, n_, n_, n_, &alpha, db_.as<void>(), type, n_,
                             da_.as<void>(), type, n_, &beta, dc_.as<void>(), type, n_, compute,
                             CUBLAS_GEMM_DEFAULT));
  }

  // The four corners of C against float64 (the throughput of a wrong product
  // means nothing); error relative to (|A||B|)_ij as matmul's verify.
  void check_corners() {
    const double tolerance = precision_ == "fp32" ? 1e-5 : 4e-3;
    const int last = n_ - 1;
    const std::pair<int, int> corners[] = {{0, 0}, {0, last}, {last, 0}, {last, last}};
    for (const auto& [i, j] : corners) {
      double ref = 0, magnitude = 0;
      for (int k = 0; k < n_; ++k) {
        const double p = static_cast<double>(a_[at(i, k)]) * static_cast<double>(b_[at(k, j)]);
        ref += p;
        magnitude += std::fabs(p);
      }
      const double c = entry(i, j);
      const double error = std::fabs(c - ref) / std::max(magnitude, 1e-300);
      if (!(error <= tolerance)) {
        throw std::runtime_error("C[" + std::to_string(i) + "][" + std::to_string(j) + "] = " + std::to_string(c) +
                                 ", float64 reference " + std::to_string(ref));
      }
    }
  }

 private:
  bool bf16() const { return precision_ == "bf16"; }
  std::size_t at(int i, int j) const {
    return static_cast<std::size_t>(i) * static_cast<std::size_t>(n_) + static_cast<std::size_t>(j);
  }

  // bf16 inputs are rounded once here, so the reference sees what the GPU reads.
  std::vector<float> random_matrix(std::size_t count, std::uint64_t seed) const {
    std::vector<float> m(count);
    mpsb::fill_uniform(m.data(), count, seed, -1.0f, 1.0f);
    if (bf16()) {
      for (auto& x : m) x = __bfloat162float(__float2bfloat16(x));
    }
    return m;
  }

  void upload(const std::vector<float>& host, mpsb::DeviceBuffer& device) {
    if (bf16()) {
      std::vector<__nv_bfloat16> converted(host.size());
      for (std::size_t i = 0; i < host.size(); ++i) converted[i] = __float2bfloat16(host[i]);
      MPSB_CUDA(cudaMemcpy(device.as<void>(), converted.data(), device.bytes(), cudaMemcpyHostToDevice));
    } else {
      MPSB_CUDA(cudaMemcpy(device.as<void>(), host.data(), device.bytes(), cudaMemcpyHostToDevice));
    }
  }

  double entry(int i, int j) {
    MPSB_CUDA(cudaStreamSynchronize(stream_));
    if (bf16()) {
      __nv_bfloat16 value;
      MPSB_CUDA(cudaMemcpy(&value, dc_.as<__nv_bfloat16>() + at(i, j), sizeof value, cudaMemcpyDeviceToHost));
      return static_cast<double>(__bfloat162float(value));
    }
    float value = 0;
    MPSB_CUDA(cudaMemcpy(&value, dc_.as<float>() + at(i, j), sizeof value, cudaMemcpyDeviceToHost));
    return static_cast<double>(value);
  }

  std::string precision_;
  int n_;
  cudaStream_t stream_;
  std::vector<float> a_, b_;
  mpsb::DeviceBuffer da_, db_, dc_;
  cublasHandle_t handle_ = nullptr;
};

double timed_window(Gemm& gemm, std::int64_t iterations, cudaStream_t stream) {
  const double start = now_seconds();
  for (std::int64_t i = 0; i < iterations; ++i) gemm.run();
  MPSB_CUDA(cudaStreamSynchronize(stream));
  return now_seconds() - start;
}

// The harness's calibration: grow the batch until one window lasts min_time.
std::int64_t calibrate(Gemm& gemm, double min_time_s, cudaStream_t stream) {
  std::int64_t iterations = 1;
  double window = timed_window(gemm, iterations, stream);
  while (window < min_time_s && iterations < kMaxIterations) {
    const double factor = window > 0 ? std::clamp(1.2 * min_time_s / window, 1.5, 100.0) : 100.0;
    const double grown = std::ceil(static_cast<double>(iterations) * factor);
    iterations = std::min(kMaxIterations, static_cast<std::int64_t>(grown));
    window = timed_window(gemm, iterations, stream);
  }
  return iterations;
}

void measure(const std::string& precision, int n, const Options& opt, cudaStream_t stream) {
  Gemm gemm(precision, n, stream);
  gemm.run();  // warm-up: module loading and cuBLAS heuristics stay untimed
  MPSB_CUDA(cudaStreamSynchronize(stream));
  gemm.check_corners();
  const std::int64_t iterations = calibrate(gemm, opt.min_time_s, stream);
  const double flops = 2.0 * n * static_cast<double>(n) * n * static_cast<double>(iterations);
  std::vector<double> tflops;
  for (long long r = 0; r < opt.repetitions; ++r) {
    tflops.push_back(flops / timed_window(gemm, iterations, stream) / 1e12);
  }
  gemm.check_corners();
  std::sort(tflops.begin(), tflops.end());
  const std::size_t mid = tflops.size() / 2;
  const double median = tflops.size() % 2 == 1 ? tflops[mid] : 0.5 * (tflops[mid - 1] + tflops[mid]);
  std::printf("bare-gemm %s N=%d: %.2f TFLOP/s (min %.2f, max %.2f; %lld windows of %lld iterations)\n",
              precision.c_str(), n, median, tflops.front(), tflops.back(), opt.repetitions,
              static_cast<long long>(iterations));
  std::fflush(stdout);
}

}  // namespace

int main(int argc, char** argv) {
  try {
    const Options opt = parse(argc, argv);
    char host[256] = {};
    mpsb::set_error_identity(0, gethostname(host, sizeof host - 1) == 0 ? host : "?");
    MPSB_CUDA(cudaSetDevice(0));
    cudaStream_t stream = nullptr;
    MPSB_CUDA(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));  // as the harness's stream
    for (const long long n : opt.sizes) {
      for (const auto& precision : opt.precisions) measure(precision, static_cast<int>(n), opt, stream);
    }
    MPSB_CUDA(cudaStreamDestroy(stream));
    return 0;
  } catch (const UsageError& e) {
    std::cerr << "bare-gemm: " << e.what() << " (see --help)\n";
    return 2;
  } catch (const std::exception& e) {
    std::cerr << "bare-gemm: " << e.what() << "\n";
    return 3;
  }
}
