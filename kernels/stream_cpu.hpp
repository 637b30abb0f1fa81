// Stream pieces that run on the host: the operation behind each precision,
// the work count, the input generator (shared with the GPU kernels, so both
// devices see the same arrays without keeping host copies), the --device cpu
// workload and the exact verification. The kernel and its doc block: stream.cu.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "host_device.hpp"
#include "random_inputs.hpp"
#include "workload.hpp"

namespace mpsb::stream {

// The scalar of the triad a = b + kScalar * c. Not 1 or 2 (which the
// compiler could turn into an add), and exact in any float type.
constexpr double kScalar = 3.0;

// What one precision name runs.
enum class Op {
  triad_fp64,  // "fp64": a = b + s c over double arrays
  triad_fp32,  // "fp32": a = b + s c over float arrays
  copy,        // "copy": dst = src, one fp64 array (cudaMemcpyAsync device to device on the GPU)
};

bool is_supported_precision(const std::string& precision);
Op op_for(const std::string& precision);  // throws std::invalid_argument
std::size_t element_bytes(Op op);         // 8, 4, 8
int arrays(Op op);                        // arrays allocated and moved per iteration: 3, 3, 2

// Counting rule: triad reads b and c and writes a (3 n elements, 2 n flops);
// copy reads src and writes dst (2 n elements, no flops). Write-allocate
// traffic is not counted.
Work work_per_iteration(const std::string& precision, std::int64_t n);
// All arrays of one rank (the preflight check's figure; 0 cost beyond them).
double device_bytes(const std::string& precision, std::int64_t n);

// Input element i of the stream seeded with `seed`: the i-th draw of
// splitmix64 (random_inputs.hpp) from that seed, computed from i alone so the
// GPU can fill arrays in parallel and the verification can regenerate any
// element without a host copy. Values are odd multiples of 2^-22 in (-1, 1):
// never zero, exact in float, and kScalar * value needs at most 24 significant
// bits, so s * c is exact in fp32 and fp64 alike. Hence b + s c has a single
// rounding whether the compiler fuses it into an FMA or not, and every correct
// implementation gives bit-identical results.
MPSB_HOST_DEVICE inline float input_value(std::uint64_t seed, std::int64_t i) {
  std::uint64_t state = splitmix64_skip(seed, static_cast<std::uint64_t>(i));
  const std::uint64_t z = splitmix64(state);
  const auto m = static_cast<std::int32_t>(z >> 42);  // top 22 bits: [0, 2^22)
  return static_cast<float>(2 * m + 1 - (1 << 22)) * (1.0f / static_cast<float>(1 << 22));
}

// Seeds of the input arrays from the workload's seed: triad b, triad c, copy src.
inline std::uint64_t seed_b(std::uint64_t seed) { return seed; }
inline std::uint64_t seed_c(std::uint64_t seed) { return seed ^ 0x5DEECE66Dull; }
inline std::uint64_t seed_src(std::uint64_t seed) { return seed; }

// The triad as every implementation writes it.
template <typename T>
MPSB_HOST_DEVICE inline T triad_value(T b, T c) {
  return b + static_cast<T>(kScalar) * c;
}

// Host fills and the host versions of the timed operations.
void fill_inputs(float* out, std::int64_t n, std::uint64_t seed);
void fill_inputs(double* out, std::int64_t n, std::uint64_t seed);
void triad(double* a, const double* b, const double* c, std::int64_t n);
void triad(float* a, const float* b, const float* c, std::int64_t n);
void copy(double* dst, const double* src, std::int64_t n);

// Verification of an output that may arrive in chunks (the GPU downloads a
// large array piecewise). The reference of element i is computed in float64
// from the regenerated inputs and rounded once to the element type, and must
// equal the output exactly (tolerance 0; error metric |out - ref| / |ref|).
// Every element is compared for n <= kFullCheckMax; above that, both ends plus
// kSampledElements seeded indices. Every element must be finite regardless
// (the outputs start as NaN, so an element nothing wrote cannot pass).
constexpr std::int64_t kFullCheckMax = std::int64_t{1} << 20;
constexpr std::int64_t kSampledElements = std::int64_t{1} << 16;

class OutputChecker {
 public:
  // seed: the workload's seed (inputs are regenerated from it).
  OutputChecker(Op op, std::int64_t n, std::uint64_t seed, std::uint64_t sample_seed);
  // Elements [begin, begin + count) of the output, of the op's element type;
  // chunks must come in order and together cover [0, n) once.
  void check(const void* chunk, std::int64_t begin, std::int64_t count);
  Verification result() const;

 private:
  double reference(std::int64_t i) const;
  void fail_at(std::int64_t i, double value, double ref);

  Op op_;
  std::int64_t n_;
  std::uint64_t seed_;
  std::vector<std::int64_t> samples_;  // sorted; empty for a full check
  std::size_t next_sample_ = 0;
  std::int64_t covered_ = 0;
  bool non_finite_ = false;
  Verification v_;
};

// The whole output on the host (the CPU workload, tests).
Verification verify_output(Op op, const void* out, std::int64_t n, std::uint64_t seed, std::uint64_t sample_seed);

std::unique_ptr<Workload> make_cpu_workload(const WorkloadArgs& args);

}  // namespace mpsb::stream
