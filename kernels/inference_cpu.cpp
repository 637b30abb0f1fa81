#include "inference_cpu.hpp"

#include <algorithm>

#include <cmath>
#include <cstring>
#include <optional>
#include <sstream>
#include <stdexcept>

#include "host_threads.hpp"
#include "random_inputs.hpp"

namespace mpsb::inference {
namespace {

constexpr std::int64_t kRowBlock = 8;  // samples per pass over a layer's weights (forward)
constexpr float kBiasRange = 0.1f;
constexpr std::size_t kLayerChunk = std::size_t{1} << 18;  // weights per chunk of make_layer

std::uint32_t float_bits(float x) {
  std::uint32_t u;
  std::memcpy(&u, &x, sizeof u);
  return u;
}
float bits_float(std::uint32_t u) {
  float x;
  std::memcpy(&x, &u, sizeof x);
  return x;
}

// Generator state of one stream of the model: the input or one layer.
std::uint64_t stream_seed(std::uint64_t seed, std::uint64_t stream) {
  std::uint64_t state = seed ^ (0xD1B54A32D192ED03ull * (stream + 1));
  return splitmix64(state);
}

}  // namespace

bool is_supported_precision(const std::string& p) { return p == "fp16" || p == "bf16"; }

Storage storage_of(const std::string& p) {
  if (p == "fp16") return Storage::fp16;
  if (p == "bf16") return Storage::bf16;
  throw std::invalid_argument("inference: unsupported precision " + p);
}

std::uint16_t float_to_fp16_bits(float x) {
  const std::uint32_t u = float_bits(x);
  const auto sign = static_cast<std::uint16_t>((u >> 16) & 0x8000u);
  const std::uint32_t a = u & 0x7FFFFFFFu;
  if (a >= 0x7F800000u) {  // inf, or NaN (kept quiet, top payload bits kept)
    return static_cast<std::uint16_t>(sign | 0x7C00u | (a > 0x7F800000u ? 0x0200u | ((a >> 13) & 0x03FFu) : 0u));
  }
  if (a >= 0x477FF000u) return static_cast<std::uint16_t>(sign | 0x7C00u);  // >= 65520: rounds to inf
  if (a < 0x38800000u) {
    // Below 2^-14: subnormal (or zero), in steps of 2^-24. The scaling is
    // exact; nearbyint rounds to nearest even; 1024 is the smallest normal's bits.
    const float steps = std::nearbyint(bits_float(a) * 16777216.0f);
    return static_cast<std::uint16_t>(sign | static_cast<std::uint16_t>(steps));
  }
  const std::uint32_t rounded = a + 0x0FFFu + ((a >> 13) & 1u);  // to nearest even on the 13 dropped bits
  return static_cast<std::uint16_t>(sign | ((rounded >> 13) - (112u << 10)));
}

float fp16_bits_to_float(std::uint16_t h) {
  const std::uint32_t sign = static_cast<std::uint32_t>(h & 0x8000u) << 16;
  const std::uint32_t exponent = (h >> 10) & 0x1Fu;
  const std::uint32_t mantissa = h & 0x03FFu;
  if (exponent == 0) {
    const float magnitude = static_cast<float>(mantissa) * (1.0f / 16777216.0f);  // exact
    return sign != 0 ? -magnitude : magnitude;
  }
  if (exponent == 31) return bits_float(sign | 0x7F800000u | (mantissa << 13));
  return bits_float(sign | ((exponent + 112u) << 23) | (mantissa << 13));
}

std::uint16_t float_to_bf16_bits(float x) {
  std::uint32_t u = float_bits(x);
  if ((u & 0x7FFFFFFFu) > 0x7F800000u) return static_cast<std::uint16_t>((u >> 16) | 0x0040u);  // quiet NaN
  u += 0x7FFFu + ((u >> 16) & 1u);  // to nearest even; a carry into the exponent gives inf
  return static_cast<std::uint16_t>(u >> 16);
}

float bf16_bits_to_float(std::uint16_t b) { return bits_float(static_cast<std::uint32_t>(b) << 16); }

std::uint16_t to_bits(float x, Storage s) { return s == Storage::fp16 ? float_to_fp16_bits(x) : float_to_bf16_bits(x); }
float from_bits(std::uint16_t bits, Storage s) {
  return s == Storage::fp16 ? fp16_bits_to_float(bits) : bf16_bits_to_float(bits);
}
float round_to(float x, Storage s) { return from_bits(to_bits(x, s), s); }

double unit_roundoff(Storage s) { return s == Storage::fp16 ? std::ldexp(1.0, -11) : std::ldexp(1.0, -8); }

Shape shape_of(std::int64_t size, const KernelParams& params) {
  Shape shape;
  shape.batch = size;
  const auto hidden = params.find("hidden");
  const auto layers = params.find("layers");
  if (hidden != params.end()) shape.hidden = hidden->second;
  if (layers != params.end()) shape.layers = layers->second;
  if (shape.batch < 1 || shape.batch > kMaxBatch || shape.hidden < kMinHidden || shape.hidden > kMaxHidden ||
      shape.layers < kMinLayers || shape.layers > kMaxLayers) {
    std::ostringstream msg;
    msg << "inference: batch " << shape.batch << ", hidden " << shape.hidden << ", layers " << shape.layers
        << " outside [1, " << kMaxBatch << "], [" << kMinHidden << ", " << kMaxHidden << "], [" << kMinLayers << ", "
        << kMaxLayers << "]";
    throw std::invalid_argument(msg.str());
  }
  return shape;
}

std::vector<float> make_input(Storage s, const Shape& shape, std::uint64_t seed) {
  std::vector<float> input(static_cast<std::size_t>(shape.batch * shape.hidden));
  fill_uniform(input.data(), input.size(), stream_seed(seed, 0), -1.0f, 1.0f);
  for (auto& x : input) x = round_to(x, s);
  return input;
}

void make_layer(Storage s, std::int64_t hidden, std::uint64_t seed, std::int64_t layer, float* weights,
                float* biases) {
  const auto count = static_cast<std::size_t>(hidden * hidden);
  const auto h = static_cast<std::size_t>(hidden);
  const float a = std::sqrt(6.0f / static_cast<float>(hidden));
  // One generator stream, the weights' draws then the biases': the weights in chunks on a few threads,
  // each starting where the stream is at its first element (splitmix64_skip), so the values are the
  // sequential loop's.
  const std::uint64_t start = stream_seed(seed, static_cast<std::uint64_t>(layer) + 1);
  const auto chunks = static_cast<std::int64_t>((count + kLayerChunk - 1) / kLayerChunk);
  for_each_chunk(chunks, [&](std::int64_t c) {
    const std::size_t begin = static_cast<std::size_t>(c) * kLayerChunk, end = std::min(count, begin + kLayerChunk);
    std::uint64_t state = splitmix64_skip(start, begin);
    for (std::size_t i = begin; i < end; ++i) weights[i] = round_to(uniform_float(state, -a, a), s);
  });
  std::uint64_t state = splitmix64_skip(start, count);
  for (std::size_t j = 0; j < h; ++j) biases[j] = round_to(uniform_float(state, -kBiasRange, kBiasRange), s);
}

Model make_model(Storage s, const Shape& shape, std::uint64_t seed) {
  Model m;
  m.shape = shape;
  m.storage = s;
  m.input = make_input(s, shape, seed);
  const auto h = static_cast<std::size_t>(shape.hidden);
  m.weights.resize(static_cast<std::size_t>(shape.layers) * h * h);
  m.biases.resize(static_cast<std::size_t>(shape.layers) * h);
  for (std::int64_t l = 0; l < shape.layers; ++l) {
    make_layer(s, shape.hidden, seed, l, m.weights.data() + static_cast<std::size_t>(l) * h * h,
               m.biases.data() + static_cast<std::size_t>(l) * h);
  }
  return m;
}

void forward(const Model& m, float* out) {
  const std::int64_t batch = m.shape.batch, h = m.shape.hidden, layers = m.shape.layers;
  std::vector<float> x(m.input), y(x.size());
  for (std::int64_t l = 0; l < layers; ++l) {
    const float* w = m.weights.data() + l * h * h;
    const float* b = m.biases.data() + l * h;
    const bool last = l == layers - 1;
    // Blocks of samples; inside, k-i-j order: each row of W streams once per
    // block while the block's accumulator rows stay in cache, and the
    // innermost loop (over output features) vectorizes.
    for (std::int64_t i0 = 0; i0 < batch; i0 += kRowBlock) {
      const std::int64_t i1 = std::min(batch, i0 + kRowBlock);
      std::fill(y.begin() + i0 * h, y.begin() + i1 * h, 0.0f);
      for (std::int64_t k = 0; k < h; ++k) {
        const float* w_row = w + k * h;
        for (std::int64_t i = i0; i < i1; ++i) {
          const float x_ik = x[static_cast<std::size_t>(i * h + k)];
          float* y_row = y.data() + i * h;
          for (std::int64_t j = 0; j < h; ++j) y_row[j] += x_ik * w_row[j];
        }
      }
      for (std::int64_t i = i0; i < i1; ++i) {
        float* y_row = y.data() + i * h;
        for (std::int64_t j = 0; j < h; ++j) {
          const float v = y_row[j] + b[j];
          y_row[j] = round_to(last ? v : std::max(v, 0.0f), m.storage);
        }
      }
    }
    std::swap(x, y);
  }
  std::copy(x.begin(), x.end(), out);
}

Work work_per_iteration(const Shape& shape) {
  const double b = static_cast<double>(shape.batch), h = static_cast<double>(shape.hidden),
               l = static_cast<double>(shape.layers);
  return Work{2.0 * b * h * h * l, kElementBytes * (l * h * h + l * h + 2.0 * b * h), 1, "request"};
}

std::size_t padded_bytes(std::size_t bytes) {
  return (bytes + kDeviceAlignment - 1) / kDeviceAlignment * kDeviceAlignment;
}

double device_bytes(const Shape& shape) {
  const auto h = static_cast<std::size_t>(shape.hidden);
  const auto elem = static_cast<std::size_t>(kElementBytes);
  const double per_layer = static_cast<double>(padded_bytes(h * h * elem) + padded_bytes(h * elem));
  const double activations = 2.0 * static_cast<double>(padded_bytes(static_cast<std::size_t>(shape.batch) * h * elem));
  return static_cast<double>(shape.layers) * per_layer + activations + static_cast<double>(kWorkspaceBytes);
}

namespace {

// --device cpu: the same model and forward pass in float on one thread. The
// request's input is read from the model and its output written to out_.
class InferenceCpu final : public Workload {
 public:
  explicit InferenceCpu(const WorkloadArgs& args)
      : storage_(storage_of(args.precision)), shape_(shape_of(args.size, args.params)) {}

  void setup(std::uint64_t seed) override {
    seed_ = seed;
    model_ = make_model(storage_, shape_, seed);
    out_.assign(static_cast<std::size_t>(shape_.batch * shape_.hidden), NAN);
  }
  void run() override { forward(model_, out_.data()); }
  void sync() override {}
  void poison_outputs() override { std::fill(out_.begin(), out_.end(), NAN); }
  Work work() const override { return work_per_iteration(shape_); }
  Verification verify() override {
    if (!reference_) reference_ = output_reference(storage_, shape_, seed_, seed_ + 1);  // once: verified again when kept
    return verify_output(*reference_, shape_, out_.data());
  }

 private:
  Storage storage_;
  Shape shape_;
  std::uint64_t seed_ = 0;
  std::optional<OutputReference> reference_;
  Model model_;
  std::vector<float> out_;
};

}  // namespace

std::unique_ptr<Workload> make_cpu_workload(const WorkloadArgs& args) { return std::make_unique<InferenceCpu>(args); }

}  // namespace mpsb::inference
