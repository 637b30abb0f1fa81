#include "stream_cpu.hpp"

#include <algorithm>
#include <cmath>
#include <sstream>
#include <stdexcept>

#include "random_inputs.hpp"

namespace mpsb::stream {

bool is_supported_precision(const std::string& p) { return p == "fp64" || p == "fp32" || p == "copy"; }

Op op_for(const std::string& p) {
  if (p == "fp64") return Op::triad_fp64;
  if (p == "fp32") return Op::triad_fp32;
  if (p == "copy") return Op::copy;
  throw std::invalid_argument("stream: unsupported precision " + p);
}

std::size_t element_bytes(Op op) { return op == Op::triad_fp32 ? 4 : 8; }
int arrays(Op op) { return op == Op::copy ? 2 : 3; }

Work work_per_iteration(const std::string& precision, std::int64_t n) {
  const Op op = op_for(precision);
  const double elements = static_cast<double>(n);
  const double flops = op == Op::copy ? 0.0 : 2.0 * elements;  // one multiply, one add per element
  return Work{flops, arrays(op) * elements * static_cast<double>(element_bytes(op)), 0, ""};
}

double device_bytes(const std::string& precision, std::int64_t n) {
  const Op op = op_for(precision);
  return arrays(op) * static_cast<double>(n) * static_cast<double>(element_bytes(op));
}

void fill_inputs(float* out, std::int64_t n, std::uint64_t seed) {
  for (std::int64_t i = 0; i < n; ++i) out[i] = input_value(seed, i);
}
void fill_inputs(double* out, std::int64_t n, std::uint64_t seed) {
  for (std::int64_t i = 0; i < n; ++i) out[i] = input_value(seed, i);
}

void triad(double* a, const double* b, const double* c, std::int64_t n) {
  for (std::int64_t i = 0; i < n; ++i) a[i] = triad_value(b[i], c[i]);
}
void triad(float* a, const float* b, const float* c, std::int64_t n) {
  for (std::int64_t i = 0; i < n; ++i) a[i] = triad_value(b[i], c[i]);
}
void copy(double* dst, const double* src, std::int64_t n) { std::copy(src, src + n, dst); }

OutputChecker::OutputChecker(Op op, std::int64_t n, std::uint64_t seed, std::uint64_t sample_seed)
    : op_(op), n_(n), seed_(seed) {
  v_.tolerance = 0;
  if (n_ > kFullCheckMax) {
    samples_.reserve(static_cast<std::size_t>(kSampledElements) + 2);
    samples_.push_back(0);
    samples_.push_back(n_ - 1);
    std::uint64_t state = sample_seed;
    for (std::int64_t s = 0; s < kSampledElements; ++s) {
      samples_.push_back(static_cast<std::int64_t>(splitmix64(state) % static_cast<std::uint64_t>(n_)));
    }
    std::sort(samples_.begin(), samples_.end());
    samples_.erase(std::unique(samples_.begin(), samples_.end()), samples_.end());
  }
}

double OutputChecker::reference(std::int64_t i) const {
  if (op_ == Op::copy) return input_value(seed_src(seed_), i);
  // b + s c is exact in float64 for these inputs (odd multiples of 2^-22 below
  // 1 in magnitude); one rounding to the element type gives the correct result.
  const double exact =
      static_cast<double>(input_value(seed_b(seed_), i)) + kScalar * static_cast<double>(input_value(seed_c(seed_), i));
  return op_ == Op::triad_fp32 ? static_cast<double>(static_cast<float>(exact)) : exact;
}

void OutputChecker::fail_at(std::int64_t i, double value, double ref) {
  // The detail names the worst element; a non-finite one is the worst there is.
  const double err = std::isfinite(value) ? std::fabs(value - ref) / std::max(std::fabs(ref), 1e-300) : INFINITY;
  if (!v_.detail.empty() && err <= v_.max_rel_error) return;
  v_.max_rel_error = std::max(v_.max_rel_error, err);
  std::ostringstream msg;
  msg.precision(17);
  msg << (op_ == Op::copy ? "dst[" : "a[") << i << "] = " << value;
  if (std::isfinite(value)) {
    msg << ", expected " << ref;
  } else {
    msg << " is not finite";
  }
  v_.detail = msg.str();
}

void OutputChecker::check(const void* chunk, std::int64_t begin, std::int64_t count) {
  if (begin != covered_ || count < 0 || begin + count > n_) {
    throw std::logic_error("stream: output chunks must come in order and cover the array once");
  }
  const bool full = samples_.empty();
  for (std::int64_t k = 0; k < count; ++k) {
    const std::int64_t i = begin + k;
    const double value = op_ == Op::triad_fp32 ? static_cast<double>(static_cast<const float*>(chunk)[k])
                                               : static_cast<const double*>(chunk)[k];
    if (!std::isfinite(value)) {
      if (!non_finite_) {
        fail_at(i, value, reference(i));  // the first non-finite element names the failure
        non_finite_ = true;
      }
      continue;
    }
    bool compare = full;
    if (!full && next_sample_ < samples_.size() && samples_[next_sample_] == i) {
      compare = true;
      ++next_sample_;
    }
    if (!compare) continue;
    const double ref = reference(i);
    ++v_.checked;
    if (value != ref) fail_at(i, value, ref);
  }
  covered_ = begin + count;
  while (next_sample_ < samples_.size() && samples_[next_sample_] < covered_) ++next_sample_;
}

Verification OutputChecker::result() const {
  Verification v = v_;
  if (covered_ != n_) {
    std::ostringstream msg;
    msg << "only " << covered_ << " of " << n_ << " elements were checked";
    v.ok = false;
    v.detail = msg.str();
    return v;
  }
  v.ok = !non_finite_ && v.max_rel_error <= v.tolerance && v.detail.empty();
  return v;
}

Verification verify_output(Op op, const void* out, std::int64_t n, std::uint64_t seed, std::uint64_t sample_seed) {
  OutputChecker checker(op, n, seed, sample_seed);
  checker.check(out, 0, n);
  return checker.result();
}

namespace {

// --device cpu: one thread, the same operations over host arrays.
class StreamCpu final : public Workload {
 public:
  explicit StreamCpu(const WorkloadArgs& args) : precision_(args.precision), op_(op_for(args.precision)), n_(args.size) {}

  void setup(std::uint64_t seed) override {
    seed_ = seed;
    const auto count = static_cast<std::size_t>(n_);
    switch (op_) {
      case Op::triad_fp64:
        b64_.resize(count);
        c64_.resize(count);
        fill_inputs(b64_.data(), n_, seed_b(seed));
        fill_inputs(c64_.data(), n_, seed_c(seed));
        a64_.assign(count, NAN);
        break;
      case Op::triad_fp32:
        b32_.resize(count);
        c32_.resize(count);
        fill_inputs(b32_.data(), n_, seed_b(seed));
        fill_inputs(c32_.data(), n_, seed_c(seed));
        a32_.assign(count, NAN);
        break;
      case Op::copy:
        b64_.resize(count);
        fill_inputs(b64_.data(), n_, seed_src(seed));
        a64_.assign(count, NAN);
        break;
    }
  }
  void run() override {
    switch (op_) {
      case Op::triad_fp64: triad(a64_.data(), b64_.data(), c64_.data(), n_); break;
      case Op::triad_fp32: triad(a32_.data(), b32_.data(), c32_.data(), n_); break;
      case Op::copy: copy(a64_.data(), b64_.data(), n_); break;
    }
  }
  void sync() override {}
  void poison_outputs() override {
    std::fill(a64_.begin(), a64_.end(), NAN);
    std::fill(a32_.begin(), a32_.end(), NAN);
  }
  Work work() const override { return work_per_iteration(precision_, n_); }
  Verification verify() override {
    const void* out = op_ == Op::triad_fp32 ? static_cast<const void*>(a32_.data()) : a64_.data();
    return verify_output(op_, out, n_, seed_, seed_ + 1);
  }

 private:
  std::string precision_;
  Op op_;
  std::int64_t n_;
  std::uint64_t seed_ = 0;
  std::vector<double> a64_, b64_, c64_;  // copy: a64_ = dst, b64_ = src
  std::vector<float> a32_, b32_, c32_;
};

}  // namespace

std::unique_ptr<Workload> make_cpu_workload(const WorkloadArgs& args) { return std::make_unique<StreamCpu>(args); }

}  // namespace mpsb::stream
