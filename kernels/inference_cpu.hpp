// Inference pieces that run on the host: the fp16/bf16 storage formats (bit
// conversions and rounding, identical to the GPU's round-to-nearest-even),
// the seeded model (input batch, weights, biases), the single-threaded float
// forward pass used by --device cpu, the work and memory counts, and the
// float64 reference that verifies any implementation. See inference.cu for the
// kernel's description.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "workload.hpp"

namespace mpsb::inference {

// KernelInfo::params and the batch (size) limits.
constexpr std::int64_t kDefaultHidden = 2048, kMinHidden = 16, kMaxHidden = 16384;
constexpr std::int64_t kDefaultLayers = 4, kMinLayers = 1, kMaxLayers = 64;
constexpr std::int64_t kMaxBatch = 4096;
constexpr double kElementBytes = 2;                        // fp16 and bf16 alike
constexpr std::size_t kWorkspaceBytes = 32u * 1024 * 1024;  // cuBLASLt workspace
constexpr std::size_t kDeviceAlignment = 256;              // per-layer weights and biases start aligned

// How the inputs, weights, biases and activations are stored (the arithmetic is fp32).
enum class Storage { fp16, bf16 };
bool is_supported_precision(const std::string& precision);
Storage storage_of(const std::string& precision);  // throws std::invalid_argument

// IEEE binary16 and bfloat16 bit patterns, round to nearest even (as
// __float2half_rn / __float2bfloat16_rn): subnormals kept, overflow to inf,
// NaN stays NaN. The bits -> float direction is exact.
std::uint16_t float_to_fp16_bits(float x);
float fp16_bits_to_float(std::uint16_t h);
std::uint16_t float_to_bf16_bits(float x);
float bf16_bits_to_float(std::uint16_t b);
std::uint16_t to_bits(float x, Storage s);
float from_bits(std::uint16_t bits, Storage s);
float round_to(float x, Storage s);  // from_bits(to_bits(x))
// Unit roundoff: the largest relative rounding error of the format, 2^-11 (fp16), 2^-8 (bf16).
double unit_roundoff(Storage s);

// One request batch through the network: `batch` samples of `hidden` features
// through `layers` fully connected hidden x hidden layers.
struct Shape {
  std::int64_t batch = 1, hidden = kDefaultHidden, layers = kDefaultLayers;
};
// size = batch; hidden and layers from the params (defaults when absent).
Shape shape_of(std::int64_t size, const KernelParams& params);

// The seeded model, every value already rounded to the storage format:
//   input   batch x hidden, uniform(-1, 1)
//   weights per layer hidden x hidden, row k = input feature k, column j =
//           output feature j (Y = X W), uniform(-a, a) with a = sqrt(6 / hidden)
//           (He initialisation: the mean square of the activations is kept
//           through each ReLU layer, so they stay O(1) at any depth)
//   biases  per layer `hidden` values, uniform(-0.1, 0.1)
// Each layer has its own generator, so any layer can be made alone (the GPU
// uploads and the reference regenerates one layer at a time).
std::vector<float> make_input(Storage s, const Shape& shape, std::uint64_t seed);
void make_layer(Storage s, std::int64_t hidden, std::uint64_t seed, std::int64_t layer, float* weights,
                float* biases);

// All of it in host memory, for the CPU workload and the tests.
struct Model {
  Shape shape;
  Storage storage = Storage::fp16;
  std::vector<float> input;    // batch x hidden
  std::vector<float> weights;  // layers x hidden x hidden
  std::vector<float> biases;   // layers x hidden
};
Model make_model(Storage s, const Shape& shape, std::uint64_t seed);

// The forward pass in float: per layer Y = X W + b accumulated in float,
// ReLU on all but the last layer, each layer's output rounded to the storage
// format (as the GPU stores it). Single thread; the weights stream once per
// layer and per block of 8 samples. out: batch x hidden.
void forward(const Model& m, float* out);

// Per iteration (one request batch): flops = 2 B H^2 L; bytes = weights +
// biases + input + output, 2 (L H^2 + L H + 2 B H); items = 1 "request".
Work work_per_iteration(const Shape& shape);
// Device memory of one rank: weights and biases (each layer padded to
// kDeviceAlignment), two B x H activation buffers, the cuBLASLt workspace.
double device_bytes(const Shape& shape);
std::size_t padded_bytes(std::size_t bytes);  // rounded up to kDeviceAlignment

// Error metric: e_ij = |y_ij - r_ij| / max(|r_ij|, rms_i), where r is a
// float64 forward pass of the same model whose hidden activations are rounded
// to the storage format as the implementation stores them (the output itself
// is not rounded) and rms_i the root mean square of r's row i (the floor keeps
// outputs near zero from being judged against their own tiny size).
// Tolerance: 1.25 u + 3 S, u = unit_roundoff (2^-11 fp16, 2^-8 bf16), where
// S, the rounding sensitivity of this model, is the largest e between r and a
// second float64 pass p that rounds nothing (the same metric, over the same
// rows). Why: a correct output is within u of r after its own last rounding
// (1.25 u leaves room for fp32 accumulation); before that, the fp32-vs-float64
// differences flip an occasional rounding of a hidden activation, and the
// following layers spread and amplify the flips as they do any rounding: by
// about 2.5 sqrt(L) u for wide layers, but up to 100 u for narrow, deep ones
// (H 32, L 64), whose outputs depend chaotically on rounding. S measures that
// amplification for the model at hand; over random models (H 16..2048, L 1..64,
// B up to 64, sequential and blocked fp32 summation) (e - u) / S stayed below
// 2. A planted error of 1 % (20.5 u in fp16) is caught in fp16 while
// 1.25 u + 3 S < 19.5 u: at the default H 2048, L 4, S is about 3 u and the
// tolerance about 10 u (0.5 %); 14 u at L 8, 17 u at H 1024, L 16. bf16's u is
// 0.39 %, so a correct bf16 output is already more than 1 % off after a few
// layers: a 1 % error is caught only at L = 1 (S = 0, tolerance 0.49 %); at
// L 4 the tolerance is about 4 %.
constexpr double kLastRoundingAllowance = 1.25;  // in units of u
constexpr double kSensitivityFactor = 3.0;
double tolerance(Storage s, double sensitivity);

// Compares out (batch x hidden, as floats) against the float64 references:
// every row when the two passes, 2 B H^2 L multiply-adds, fit the budget
// (2^31: about a second), else the first and last rows plus seeded rows up to
// it. Fails on any non-finite entry anywhere.
constexpr double kReferenceBudget = 2147483648.0;
Verification verify_output(Storage s, const Shape& shape, std::uint64_t seed, const float* out,
                           std::uint64_t sample_seed, double budget = kReferenceBudget);

// The float64 references verify_output compares with: the checked rows (rounded pass), each row's RMS
// and the rounding sensitivity. The same for the same model, input and sample seed, so a workload
// verified again (the harness keeps it from one configuration to the next) computes them once.
struct OutputReference {
  Storage storage = Storage::fp16;
  std::vector<std::int64_t> rows;
  std::vector<double> ref;  // rows x hidden
  std::vector<double> rms;  // per checked row
  double sensitivity = 0;
};
OutputReference output_reference(Storage s, const Shape& shape, std::uint64_t seed, std::uint64_t sample_seed,
                                 double budget = kReferenceBudget);
Verification verify_output(const OutputReference& reference, const Shape& shape, const float* out);

std::unique_ptr<Workload> make_cpu_workload(const WorkloadArgs& args);

}  // namespace mpsb::inference
