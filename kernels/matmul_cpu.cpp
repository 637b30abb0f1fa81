#include "matmul_cpu.hpp"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <optional>
#include <sstream>
#include <stdexcept>
#include <utility>

#include "host_threads.hpp"
#include "matmul_inputs.hpp"
#include "random_inputs.hpp"

namespace mpsb::matmul {
namespace {

constexpr std::int64_t kFullCheckMaxN = 256;   // n^3 reference work stays under 20 M multiply-adds
constexpr std::int64_t kSampledEntries = 1024;

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

// Keeps the top (32 - drop) bits, rounding to nearest even; NaN and inf pass.
float round_mantissa(float x, int drop) {
  std::uint32_t u = float_bits(x);
  if ((u & 0x7F800000u) == 0x7F800000u) return x;
  const std::uint32_t half = 1u << (drop - 1);
  const std::uint32_t lsb = (u >> drop) & 1u;
  u += half - 1 + lsb;
  u &= ~((1u << drop) - 1);
  return bits_float(u);
}

}  // namespace

float round_to_bf16(float x) { return round_mantissa(x, 16); }
float round_to_tf32(float x) { return round_mantissa(x, 13); }

bool is_supported_precision(const std::string& p) { return p == "fp32" || p == "tf32" || p == "bf16"; }

double tolerance(const std::string& p) {
  // fp32: rounding of float accumulation, observed ~1e-7 in this metric.
  // tf32: inputs rounded to 10 mantissa bits, at most ~2^-10 per product.
  // bf16: exact bf16 inputs, fp32 accumulation, C rounded to bf16 (2^-9).
  if (p == "fp32") return 1e-5;
  if (p == "tf32") return 4e-3;
  if (p == "bf16") return 4e-3;
  throw std::invalid_argument("matmul: unsupported precision " + p);
}

double element_bytes(const std::string& p) { return p == "bf16" ? 2.0 : 4.0; }

void blocked_product(const float* a, const float* b, float* c, std::int64_t n) {
  // i-k-j order inside tiles: the innermost loop streams one row of B and C,
  // which the compiler vectorizes; tiles keep B's rows in cache.
  constexpr std::int64_t kTileI = 64, kTileK = 128, kTileJ = 512;
  std::fill(c, c + n * n, 0.0f);
  for (std::int64_t i0 = 0; i0 < n; i0 += kTileI) {
    const std::int64_t i1 = std::min(n, i0 + kTileI);
    for (std::int64_t k0 = 0; k0 < n; k0 += kTileK) {
      const std::int64_t k1 = std::min(n, k0 + kTileK);
      for (std::int64_t j0 = 0; j0 < n; j0 += kTileJ) {
        const std::int64_t j1 = std::min(n, j0 + kTileJ);
        for (std::int64_t i = i0; i < i1; ++i) {
          float* c_row = c + i * n;
          for (std::int64_t k = k0; k < k1; ++k) {
            const float a_ik = a[i * n + k];
            const float* b_row = b + k * n;
            for (std::int64_t j = j0; j < j1; ++j) c_row[j] += a_ik * b_row[j];
          }
        }
      }
    }
  }
}

constexpr std::size_t kInputChunk = std::size_t{1} << 20;  // elements per chunk of make_inputs
constexpr std::int64_t kEntryChunk = 64;                    // entries per chunk of product_reference

float stored_value(bool bf16, std::uint64_t operand_seed, std::uint64_t index) {
  const float x = operand_value(operand_seed, index);
  return bf16 ? round_to_bf16(x) : x;
}

Inputs make_inputs(const std::string& precision, std::int64_t n, std::uint64_t seed) {
  Inputs in;
  in.n = n;
  const auto count = static_cast<std::size_t>(n * n);
  in.a.resize(count);
  in.b.resize(count);
  // In chunks on a few threads: the values do not depend on the chunks (matmul_inputs.hpp).
  const bool bf16 = precision == "bf16";
  const auto chunks = static_cast<std::int64_t>((count + kInputChunk - 1) / kInputChunk);
  for_each_chunk(2 * chunks, [&](std::int64_t c) {
    const bool second = c >= chunks;
    float* data = second ? in.b.data() : in.a.data();
    const std::uint64_t from = operand_seed(seed, second ? Operand::b : Operand::a);
    const std::size_t begin = static_cast<std::size_t>(second ? c - chunks : c) * kInputChunk;
    const std::size_t end = std::min(count, begin + kInputChunk);
    for (std::size_t i = begin; i < end; ++i) data[i] = stored_value(bf16, from, i);
  });
  return in;
}

ProductReference product_reference(const std::string& precision, std::int64_t n, std::uint64_t seed,
                                   std::uint64_t sample_seed) {
  ProductReference r;
  auto add_entry = [&](std::int64_t i, std::int64_t j) { r.entries.push_back({i, j, 0, 0}); };
  const bool full = n <= kFullCheckMaxN;
  if (full) {
    for (std::int64_t i = 0; i < n; ++i)
      for (std::int64_t j = 0; j < n; ++j) add_entry(i, j);
  } else {
    add_entry(0, 0);
    add_entry(0, n - 1);
    add_entry(n - 1, 0);
    add_entry(n - 1, n - 1);
    std::uint64_t state = sample_seed;
    for (std::int64_t s = 0; s < kSampledEntries; ++s) {
      const auto i = static_cast<std::int64_t>(splitmix64(state) % static_cast<std::uint64_t>(n));
      const auto j = static_cast<std::int64_t>(splitmix64(state) % static_cast<std::uint64_t>(n));
      add_entry(i, j);
    }
  }
  // Every entry needs row i of A and column j of B. Small matrices are made whole; for sampled
  // entries each row and column is made alone, so the reference never holds A and B (N = 8192: 17 M
  // values instead of 134 M). Each entry's float64 dot product is summed in ascending k.
  const bool bf16 = precision == "bf16";
  const std::uint64_t seed_a = operand_seed(seed, Operand::a), seed_b = operand_seed(seed, Operand::b);
  std::optional<Inputs> whole;
  if (full) whole = make_inputs(precision, n, seed);
  const auto count = static_cast<std::int64_t>(r.entries.size());
  const auto un = static_cast<std::uint64_t>(n);
  for_each_chunk((count + kEntryChunk - 1) / kEntryChunk, [&](std::int64_t c) {
    std::vector<float> row(full ? 0 : static_cast<std::size_t>(n)), column(row.size());
    for (std::int64_t e = c * kEntryChunk; e < std::min(count, (c + 1) * kEntryChunk); ++e) {
      ProductReference::Entry& entry = r.entries[static_cast<std::size_t>(e)];
      const auto i = static_cast<std::uint64_t>(entry.i), j = static_cast<std::uint64_t>(entry.j);
      auto a_ik = [&](std::uint64_t k) { return full ? whole->a[i * un + k] : row[k]; };
      auto b_kj = [&](std::uint64_t k) { return full ? whole->b[k * un + j] : column[k]; };
      if (!full) {
        for (std::uint64_t k = 0; k < un; ++k) {
          row[k] = stored_value(bf16, seed_a, i * un + k);
          column[k] = stored_value(bf16, seed_b, k * un + j);
        }
      }
      double ref = 0, magnitude = 0;
      for (std::uint64_t k = 0; k < un; ++k) {
        const double p = static_cast<double>(a_ik(k)) * static_cast<double>(b_kj(k));
        ref += p;
        magnitude += std::fabs(p);
      }
      entry.ref = ref;
      entry.magnitude = magnitude;
    }
  });
  return r;
}

Verification check_product(const ProductReference& reference, std::int64_t n, const ProductCheckInput& c,
                           const std::string& precision) {
  Verification v;
  v.tolerance = tolerance(precision);
  if (!c.all_finite) {
    std::ostringstream msg;
    msg << "C[" << c.first_nonfinite / static_cast<std::size_t>(n) << "][" << c.first_nonfinite % static_cast<std::size_t>(n)
        << "] is not finite (" << c.first_nonfinite_value << ")";
    v.detail = msg.str();
    v.max_rel_error = INFINITY;
    return v;
  }
  if (c.at_entries.size() != reference.entries.size()) {
    throw std::logic_error("matmul: " + std::to_string(c.at_entries.size()) + " values of C for " +
                           std::to_string(reference.entries.size()) + " reference entries");
  }
  for (std::size_t e = 0; e < reference.entries.size(); ++e) {
    const auto& entry = reference.entries[e];
    const float value = c.at_entries[e];
    const double err = std::fabs(static_cast<double>(value) - entry.ref) / std::max(entry.magnitude, 1e-300);
    ++v.checked;
    if (err > v.max_rel_error) {
      v.max_rel_error = err;
      if (err > v.tolerance) {
        std::ostringstream msg;
        msg << "C[" << entry.i << "][" << entry.j << "] = " << value << ", float64 reference " << entry.ref;
        v.detail = msg.str();
      }
    }
  }
  v.ok = v.max_rel_error <= v.tolerance;
  if (v.ok) v.detail.clear();
  return v;
}

Verification verify_product(const ProductReference& reference, std::int64_t n, const std::vector<float>& c,
                            const std::string& precision) {
  ProductCheckInput in;
  for (std::size_t idx = 0; idx < c.size(); ++idx) {
    if (!std::isfinite(c[idx])) {
      in.all_finite = false;
      in.first_nonfinite = idx;
      in.first_nonfinite_value = c[idx];
      return check_product(reference, n, in, precision);
    }
  }
  in.at_entries.reserve(reference.entries.size());
  for (const auto& e : reference.entries) in.at_entries.push_back(c[static_cast<std::size_t>(e.i * n + e.j)]);
  return check_product(reference, n, in, precision);
}

Verification verify_product(const std::string& precision, std::int64_t n, std::uint64_t seed,
                            const std::vector<float>& c, std::uint64_t sample_seed) {
  return verify_product(product_reference(precision, n, seed, sample_seed), n, c, precision);
}

namespace {

// --device cpu: one thread, the blocked product, inputs rounded as the GPU
// precision would round them so the same tolerance applies.
class MatmulCpu final : public Workload {
 public:
  explicit MatmulCpu(const WorkloadArgs& args) : precision_(args.precision), n_(args.size) {}

  void setup(std::uint64_t seed) override {
    seed_ = seed;
    Inputs in = make_inputs(precision_, n_, seed);
    a_ = std::move(in.a);
    b_ = std::move(in.b);
    if (precision_ == "tf32") {
      for (auto& x : a_) x = round_to_tf32(x);
      for (auto& x : b_) x = round_to_tf32(x);
    }
    c_.assign(a_.size(), NAN);
  }
  void run() override {
    blocked_product(a_.data(), b_.data(), c_.data(), n_);
    if (precision_ == "bf16") {
      for (auto& x : c_) x = round_to_bf16(x);
    }
  }
  void sync() override {}
  void poison_outputs() override { std::fill(c_.begin(), c_.end(), NAN); }
  Work work() const override {
    const double n = static_cast<double>(n_);
    return Work{2.0 * n * n * n, 3.0 * n * n * element_bytes(precision_), 0, ""};
  }
  Verification verify() override {
    if (!reference_) reference_ = product_reference(precision_, n_, seed_, seed_ + 1);  // once: verified again when kept
    return verify_product(*reference_, n_, c_, precision_);
  }

 private:
  std::string precision_;
  std::int64_t n_;
  std::uint64_t seed_ = 0;
  std::optional<ProductReference> reference_;
  std::vector<float> a_, b_, c_;
};

}  // namespace

std::unique_ptr<Workload> make_cpu_workload(const WorkloadArgs& args) { return std::make_unique<MatmulCpu>(args); }

}  // namespace mpsb::matmul
