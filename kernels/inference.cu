// inference: a small-batch MLP forward pass as a model server runs it, one
// request batch per iteration (size = B, the samples in the batch).
//
// Purpose: the MPS guides name inference with small batches as the workload
//   that gains most from sharing a GPU: each request is a chain of short
//   GEMMs (B x H times H x H) that leave most SMs idle and whose latency is
//   dominated by launches, copies and waiting for the GPU. With time slicing
//   a request waits for the other processes' time slices; with MPS the
//   kernels of several processes run side by side. This kernel measures both
//   throughput (requests/s, the primary metric) and each request's latency.
// Model: `layers` (L, param, default 4, 1..64) fully connected layers of
//   width `hidden` (H, param, default 2048, 16..16384): Y = act(X W + b) with
//   X: B x H, W: H x H, b: H; act = ReLU on every layer but the last (bias
//   on all of them). Inputs, weights, biases and activations are stored in
//   the precision, fp16 or bf16; products accumulate in fp32 and the epilogue
//   (bias, ReLU) runs in fp32 before the output is rounded to the storage
//   type. Weights are He-initialised (uniform(-a, a), a = sqrt(6 / H)) so the
//   activations stay O(1) at any depth (inference_cpu.hpp).
// One iteration (run()): cudaMemcpyAsync of the input batch from a pinned
//   host buffer, L cublasLtMatmul calls (epilogue CUBLASLT_EPILOGUE_RELU_BIAS,
//   the last CUBLASLT_EPILOGUE_BIAS, the bias through
//   CUBLASLT_MATMUL_DESC_BIAS_POINTER) ping-ponging between two activation
//   buffers, and cudaMemcpyAsync of the output batch into a pinned host
//   buffer, all on the harness's stream. The weights stay resident on the
//   device (uploaded in setup); the algorithms (one for the ReLU layers, one
//   for the last) come from the cuBLASLt heuristic once, in setup, with a
//   32 MiB workspace. Layout: row-major Y = X W is column-major
//   Y^T = W^T X^T, i.e. D (H x B) = A (H x H, the weights as stored) x
//   B (H x B, the activations as stored), no transposes, bias along D's rows.
// Latency: KernelInfo::per_iteration_latency, so the harness synchronizes the
//   stream after every iteration and times each request with host
//   steady_clock timestamps around run() + sync(): what a client sees, the
//   launches, the copies and the wait for a GPU shared with other processes
//   included. That wait is where time slicing and MPS differ; CUDA events
//   start their clock only once the GPU reaches the request, after the
//   launch and the wait in front of it.
// --device cpu: the same model and forward pass in float on one thread
//   (inference_cpu.cpp, hidden activations rounded to the storage type after
//   each layer), without copies; it exercises the harness, not a GPU.
// Work per iteration: flops = 2 B H^2 L; bytes = the minimum traffic:
//   weights + biases + input + output = 2 (L H^2 + L H + 2 B H); items = 1
//   ("request"): the primary metric is requests/s.
// Device memory: L (H^2 + H) x 2 bytes (each layer padded to 256 bytes),
//   two B x H activation buffers, the 32 MiB workspace; host: 2 x B x H x 2
//   bytes pinned, plus H^2 x 6 bytes of staging during setup.
// Verification (inference_cpu.hpp): the host copy of the output (so a
//   missing copy back fails) against a float64 forward pass r of the same
//   model with the hidden activations rounded to the storage type; error
//   |y - r| / max(|r|, RMS of r's row); tolerance 1.25 u + 3 S, u = 2^-11
//   (fp16) or 2^-8 (bf16), S the same error between r and a float64 pass that
//   rounds nothing: how far this model's output moves with the rounding of its
//   hidden activations (about 2.5 sqrt(L) u for wide layers, far more for
//   narrow, deep ones). At the defaults the fp16 tolerance is about 0.5 %, so
//   one output 1 % off fails; bf16's is about 4 % (its rounding step alone is
//   0.4 to 0.8 %). Every row when the two passes (2 B H^2 L multiply-adds) fit
//   2^31, else the first, the last and seeded rows up to that; every output
//   must be finite. setup() and poison_outputs() fill the host output and both
//   activation buffers with NaN, so a request that was not computed and copied
//   back fails.
// Limits: B <= 4096, H <= 16384, L <= 64 (the largest model is 34 GB of
//   weights, and its float64 check, which regenerates every layer on the host,
//   takes about a minute). H that is not a multiple of 8 works but leaves the
//   tensor-core paths to cuBLASLt's slower fallback algorithms.
#include <cublasLt.h>
#include <cuda_runtime.h>

#include <algorithm>
#include <cstring>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "cuda_check.hpp"
#include "device_buffer.hpp"
#include "inference_cpu.hpp"
#include "registry.hpp"

namespace mpsb::inference {
namespace {

struct PinnedFree {
  void operator()(std::uint16_t* p) const { cudaFreeHost(p); }  // no throw from a deleter
};
using PinnedHalves = std::unique_ptr<std::uint16_t[], PinnedFree>;

PinnedHalves pinned_halves(std::size_t count) {
  void* p = nullptr;
  MPSB_CUDA(cudaMallocHost(&p, count * sizeof(std::uint16_t)));
  return PinnedHalves(static_cast<std::uint16_t*>(p));
}

// cuBLASLt objects, destroyed in reverse order of creation (status ignored:
// no throw from a destructor; a failure would resurface at the next call).
struct LtHandle {
  cublasLtHandle_t h = nullptr;
  ~LtHandle() {
    if (h != nullptr) cublasLtDestroy(h);
  }
};
struct LtMatmulDesc {
  cublasLtMatmulDesc_t d = nullptr;
  LtMatmulDesc() = default;
  LtMatmulDesc(LtMatmulDesc&& o) noexcept : d(std::exchange(o.d, nullptr)) {}
  LtMatmulDesc& operator=(LtMatmulDesc&&) = delete;
  ~LtMatmulDesc() {
    if (d != nullptr) cublasLtMatmulDescDestroy(d);
  }
};
struct LtLayout {
  cublasLtMatrixLayout_t l = nullptr;
  ~LtLayout() {
    if (l != nullptr) cublasLtMatrixLayoutDestroy(l);
  }
};
struct LtPreference {
  cublasLtMatmulPreference_t p = nullptr;
  ~LtPreference() {
    if (p != nullptr) cublasLtMatmulPreferenceDestroy(p);
  }
};

class InferenceGpu final : public Workload {
 public:
  explicit InferenceGpu(const WorkloadArgs& args)
      : storage_(storage_of(args.precision)),
        shape_(shape_of(args.size, args.params)),
        stream_(args.stream),
        weight_stride_(padded_bytes(static_cast<std::size_t>(shape_.hidden * shape_.hidden) * sizeof(std::uint16_t))),
        bias_stride_(padded_bytes(static_cast<std::size_t>(shape_.hidden) * sizeof(std::uint16_t))),
        activation_count_(static_cast<std::size_t>(shape_.batch * shape_.hidden)) {}

  // Members release in reverse declaration order: the descriptors before the
  // handle, the device buffers and pinned memory after the last use.
  ~InferenceGpu() override = default;

  void setup(std::uint64_t seed) override {
    seed_ = seed;
    const std::int64_t h = shape_.hidden;
    const auto layers = static_cast<std::size_t>(shape_.layers);
    const std::size_t activation_bytes = activation_count_ * sizeof(std::uint16_t);

    // The request's input in pinned memory (copied in by every run()); the
    // output poisoned with NaN (0xFFFF is NaN in fp16 and bf16 alike).
    const std::vector<float> input = make_input(storage_, shape_, seed);
    h_input_ = pinned_halves(activation_count_);
    h_output_ = pinned_halves(activation_count_);
    for (std::size_t i = 0; i < activation_count_; ++i) h_input_[i] = to_bits(input[i], storage_);
    std::memset(h_output_.get(), 0xFF, activation_bytes);

    weights_ = DeviceBuffer(layers * weight_stride_);
    biases_ = DeviceBuffer(layers * bias_stride_);
    activations_[0] = DeviceBuffer(activation_bytes);
    activations_[1] = DeviceBuffer(activation_bytes);
    workspace_ = DeviceBuffer(kWorkspaceBytes);
    poison_device_activations();

    // One layer at a time through a pageable staging buffer: the host never
    // holds the whole model.
    std::vector<float> w(static_cast<std::size_t>(h * h)), b(static_cast<std::size_t>(h));
    std::vector<std::uint16_t> w_bits(w.size()), b_bits(b.size());
    for (std::size_t l = 0; l < layers; ++l) {
      make_layer(storage_, h, seed, static_cast<std::int64_t>(l), w.data(), b.data());
      for (std::size_t i = 0; i < w.size(); ++i) w_bits[i] = to_bits(w[i], storage_);
      for (std::size_t j = 0; j < b.size(); ++j) b_bits[j] = to_bits(b[j], storage_);
      MPSB_CUDA(cudaMemcpyAsync(layer_weights(l), w_bits.data(), w_bits.size() * sizeof(std::uint16_t),
                                cudaMemcpyHostToDevice, stream_));
      MPSB_CUDA(cudaMemcpyAsync(layer_bias(l), b_bits.data(), b_bits.size() * sizeof(std::uint16_t),
                                cudaMemcpyHostToDevice, stream_));
      MPSB_CUDA(cudaStreamSynchronize(stream_));  // the staging buffers are refilled next
    }

    create_matmul_plan();
    MPSB_CUDA(cudaStreamSynchronize(stream_));
  }

  void run() override {
    const std::size_t bytes = activation_count_ * sizeof(std::uint16_t);
    MPSB_CUDA(cudaMemcpyAsync(activations_[0].as<void>(), h_input_.get(), bytes, cudaMemcpyHostToDevice, stream_));
    const float alpha = 1.0f, beta = 0.0f;
    const auto layers = static_cast<std::size_t>(shape_.layers);
    for (std::size_t l = 0; l < layers; ++l) {
      const void* x = activations_[l % 2].as<const void>();
      void* y = activations_[(l + 1) % 2].as<void>();
      const bool last = l + 1 == layers;
      MPSB_CUBLAS(cublasLtMatmul(lt_.h, layer_desc_[l].d, &alpha, layer_weights(l), weights_layout_.l, x,
                                 activation_layout_.l, &beta, y, activation_layout_.l, y, activation_layout_.l,
                                 last ? &last_algo_ : &relu_algo_, workspace_.as<void>(), kWorkspaceBytes, stream_));
    }
    MPSB_CUDA(cudaMemcpyAsync(h_output_.get(), activations_[layers % 2].as<const void>(), bytes,
                              cudaMemcpyDeviceToHost, stream_));
  }

  void sync() override { MPSB_CUDA(cudaStreamSynchronize(stream_)); }

  void poison_outputs() override {
    // The host buffer is written by the copy back: let any copy in flight finish first.
    MPSB_CUDA(cudaStreamSynchronize(stream_));
    std::memset(h_output_.get(), 0xFF, activation_count_ * sizeof(std::uint16_t));
    poison_device_activations();
  }

  Work work() const override { return work_per_iteration(shape_); }

  Verification verify() override {
    sync();
    std::vector<float> out(activation_count_);
    for (std::size_t i = 0; i < out.size(); ++i) out[i] = from_bits(h_output_[i], storage_);
    return verify_output(storage_, shape_, seed_, out.data(), seed_ + 1);
  }

 private:
  void* layer_weights(std::size_t l) const { return weights_.as<char>() + l * weight_stride_; }
  void* layer_bias(std::size_t l) const { return biases_.as<char>() + l * bias_stride_; }

  void poison_device_activations() {
    for (auto& a : activations_) MPSB_CUDA(cudaMemsetAsync(a.as<void>(), 0xFF, a.bytes(), stream_));
  }

  // Descriptors of every layer (each with its bias pointer, so run() sets no
  // attributes) and the two heuristic picks.
  void create_matmul_plan() {
    const cudaDataType_t type = storage_ == Storage::fp16 ? CUDA_R_16F : CUDA_R_16BF;
    const auto h = static_cast<std::uint64_t>(shape_.hidden);
    const auto batch = static_cast<std::uint64_t>(shape_.batch);
    const auto ld = static_cast<std::int64_t>(shape_.hidden);
    MPSB_CUBLAS(cublasLtCreate(&lt_.h));
    MPSB_CUBLAS(cublasLtMatrixLayoutCreate(&weights_layout_.l, type, h, h, ld));
    MPSB_CUBLAS(cublasLtMatrixLayoutCreate(&activation_layout_.l, type, h, batch, ld));
    const cublasOperation_t no_transpose = CUBLAS_OP_N;
    const auto layers = static_cast<std::size_t>(shape_.layers);
    layer_desc_.reserve(layers);
    for (std::size_t l = 0; l < layers; ++l) {
      layer_desc_.emplace_back();
      cublasLtMatmulDesc_t& desc = layer_desc_.back().d;
      MPSB_CUBLAS(cublasLtMatmulDescCreate(&desc, CUBLAS_COMPUTE_32F, CUDA_R_32F));
      MPSB_CUBLAS(cublasLtMatmulDescSetAttribute(desc, CUBLASLT_MATMUL_DESC_TRANSA, &no_transpose,
                                                 sizeof no_transpose));
      MPSB_CUBLAS(cublasLtMatmulDescSetAttribute(desc, CUBLASLT_MATMUL_DESC_TRANSB, &no_transpose,
                                                 sizeof no_transpose));
      const cublasLtEpilogue_t epilogue = l + 1 == layers ? CUBLASLT_EPILOGUE_BIAS : CUBLASLT_EPILOGUE_RELU_BIAS;
      MPSB_CUBLAS(cublasLtMatmulDescSetAttribute(desc, CUBLASLT_MATMUL_DESC_EPILOGUE, &epilogue, sizeof epilogue));
      const void* bias = layer_bias(l);
      MPSB_CUBLAS(cublasLtMatmulDescSetAttribute(desc, CUBLASLT_MATMUL_DESC_BIAS_POINTER, &bias, sizeof bias));
    }
    LtPreference preference;
    MPSB_CUBLAS(cublasLtMatmulPreferenceCreate(&preference.p));
    const std::size_t workspace = kWorkspaceBytes;
    MPSB_CUBLAS(cublasLtMatmulPreferenceSetAttribute(preference.p, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES,
                                                     &workspace, sizeof workspace));
    // Every layer's pointers share layer 0's alignment (256-byte strides), so
    // one pick serves all layers of the same epilogue.
    last_algo_ = pick_algorithm(layer_desc_.back().d, preference.p, "CUBLASLT_EPILOGUE_BIAS");
    if (layers > 1) relu_algo_ = pick_algorithm(layer_desc_.front().d, preference.p, "CUBLASLT_EPILOGUE_RELU_BIAS");
  }

  cublasLtMatmulAlgo_t pick_algorithm(cublasLtMatmulDesc_t desc, cublasLtMatmulPreference_t preference,
                                      const char* epilogue) {
    cublasLtMatmulHeuristicResult_t result{};
    int found = 0;
    MPSB_CUBLAS(cublasLtMatmulAlgoGetHeuristic(lt_.h, desc, weights_layout_.l, activation_layout_.l,
                                               activation_layout_.l, activation_layout_.l, preference, 1, &result,
                                               &found));
    if (found < 1) {
      throw_fatal("cublasLtMatmulAlgoGetHeuristic",
                  std::string("no algorithm for ") + (storage_ == Storage::fp16 ? "fp16" : "bf16") + " H " +
                      std::to_string(shape_.hidden) + ", batch " + std::to_string(shape_.batch) + " with " +
                      epilogue,
                  __FILE__, __LINE__);
    }
    return result.algo;
  }

  Storage storage_;
  Shape shape_;
  cudaStream_t stream_;
  std::size_t weight_stride_, bias_stride_;  // bytes between layers
  std::size_t activation_count_;             // B x H
  std::uint64_t seed_ = 0;
  PinnedHalves h_input_, h_output_;
  DeviceBuffer weights_, biases_, workspace_;
  DeviceBuffer activations_[2];
  LtHandle lt_;
  LtLayout weights_layout_, activation_layout_;
  std::vector<LtMatmulDesc> layer_desc_;
  cublasLtMatmulAlgo_t relu_algo_{}, last_algo_{};
};

KernelInfo inference_info() {
  KernelInfo info;
  info.name = "inference";
  info.summary = "MLP forward pass per request batch (size = batch B): copy in, L cuBLASLt GEMM+bias/ReLU layers "
                 "of H x H, copy out (fp16, bf16); 2 B H^2 L flops; requests/s and latency";
  info.suite_order = 40;
  info.precisions = {"fp16", "bf16"};
  info.default_precisions = {"fp16"};
  info.default_gpu_sizes = {8, 64};
  info.default_cpu_sizes = {1, 4};
  info.max_size = kMaxBatch;
  info.primary = PrimaryMetric::items;
  info.params = {
      {"hidden", kDefaultHidden, kMinHidden, kMaxHidden, "width H of every layer (H x H weights)"},
      {"layers", kDefaultLayers, kMinLayers, kMaxLayers, "number of layers L (ReLU on all but the last)"},
  };
  info.per_iteration_latency = true;
  info.device_bytes = [](const std::string&, std::int64_t batch, const KernelParams& params) {
    return device_bytes(shape_of(batch, params));
  };
  info.make = [](const WorkloadArgs& args) -> std::unique_ptr<Workload> {
    if (args.device == DeviceKind::cpu) return make_cpu_workload(args);
    return std::make_unique<InferenceGpu>(args);
  };
  return info;
}

}  // namespace
}  // namespace mpsb::inference

namespace mpsb::inference {
MPSB_REGISTER_KERNEL(inference_info);
}
