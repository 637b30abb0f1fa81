// Matmul pieces that run on the host: the single-threaded blocked product
// used by --device cpu, input rounding to the GPU precisions, and the float64
// reference that verifies any implementation.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "workload.hpp"

namespace mpsb::matmul {

// Row-major n x n: C = A * B, float accumulation, cache-blocked.
void blocked_product(const float* a, const float* b, float* c, std::int64_t n);

float round_to_bf16(float x);  // round to nearest even, as __float2bfloat16
float round_to_tf32(float x);  // round to nearest even on 10 mantissa bits

bool is_supported_precision(const std::string& precision);
// Bound on max |C - C_ref| / (|A| |B|)_ij for a correct product at this precision.
double tolerance(const std::string& precision);
double element_bytes(const std::string& precision);

// Inputs of one rank: A and B in float, already rounded to what the precision
// stores (bf16 values for "bf16"; full fp32 for "fp32" and "tf32", whose
// rounding to tf32 is part of the computation being checked).
struct Inputs {
  std::int64_t n = 0;
  std::vector<float> a, b;
};
Inputs make_inputs(const std::string& precision, std::int64_t n, std::uint64_t seed);

// Compares C against a float64 product of the inputs make_inputs(precision, n, seed) makes: every
// entry for small n, otherwise a seeded random sample plus the four corners. Also fails on any
// non-finite entry anywhere in C.
Verification verify_product(const std::string& precision, std::int64_t n, std::uint64_t seed,
                            const std::vector<float>& c, std::uint64_t sample_seed);

// The float64 reference of the entries verify_product checks, each with its (|A||B|)_ij: the same for
// the same inputs and sample seed, so a workload verified again (the harness keeps it from one
// configuration to the next) computes it once and then only compares.
struct ProductReference {
  struct Entry {
    std::int64_t i = 0, j = 0;
    double ref = 0, magnitude = 0;
  };
  std::vector<Entry> entries;  // in the order they are checked
};
// Made from the seed (matmul_inputs.hpp), never from copies of A and B: the GPU workload has none.
ProductReference product_reference(const std::string& precision, std::int64_t n, std::uint64_t seed,
                                   std::uint64_t sample_seed);
// verify_product against a reference computed before (n: the matrices' size).
Verification verify_product(const ProductReference& reference, std::int64_t n, const std::vector<float>& c,
                            const std::string& precision);

// What the check of C needs, wherever C is (the GPU workload takes it on the device: matmul_check.hpp):
// the first entry of C, in row-major order, that is not finite (its index and value), if any, and C's
// values at the reference's entries, in their order. verify_product is this with C on the host.
struct ProductCheckInput {
  bool all_finite = true;
  std::size_t first_nonfinite = 0;
  float first_nonfinite_value = 0;
  std::vector<float> at_entries;
};
Verification check_product(const ProductReference& reference, std::int64_t n, const ProductCheckInput& c,
                           const std::string& precision);

std::unique_ptr<Workload> make_cpu_workload(const WorkloadArgs& args);

}  // namespace mpsb::matmul
