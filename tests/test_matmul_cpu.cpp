#include <gtest/gtest.h>

#include <cmath>
#include <stdexcept>
#include <string>
#include <vector>

#include "matmul_cpu.hpp"
#include "random_inputs.hpp"
#include "registry.hpp"

namespace mpsb::matmul {
namespace {

std::vector<double> naive_product(const std::vector<float>& a, const std::vector<float>& b, std::int64_t n) {
  std::vector<double> c(static_cast<std::size_t>(n * n), 0.0);
  for (std::int64_t i = 0; i < n; ++i)
    for (std::int64_t j = 0; j < n; ++j)
      for (std::int64_t k = 0; k < n; ++k) c[i * n + j] += double(a[i * n + k]) * double(b[k * n + j]);
  return c;
}

class BlockedProduct : public ::testing::TestWithParam<std::int64_t> {};

TEST_P(BlockedProduct, MatchesNaiveProduct) {
  const std::int64_t n = GetParam();
  const Inputs in = make_inputs("fp32", n, 99);
  std::vector<float> c(in.a.size(), NAN);
  blocked_product(in.a.data(), in.b.data(), c.data(), n);
  const auto ref = naive_product(in.a, in.b, n);
  for (std::size_t i = 0; i < c.size(); ++i) {
    ASSERT_NEAR(c[i], ref[i], 1e-5 * static_cast<double>(n)) << "entry " << i;
  }
}
// Sizes around the tile edges (64, 128, 512) catch off-by-one tiling.
INSTANTIATE_TEST_SUITE_P(Sizes, BlockedProduct, ::testing::Values(1, 7, 63, 64, 65, 129, 200, 513));

TEST(Rounding, Bf16AndTf32KeepTheirMantissaBits) {
  EXPECT_EQ(round_to_bf16(1.0f), 1.0f);
  // 1 + 2^-8 is exactly halfway between bf16 neighbours 1 and 1 + 2^-7: ties to even (1).
  EXPECT_EQ(round_to_bf16(1.0f + 1.0f / 256), 1.0f);
  EXPECT_EQ(round_to_bf16(1.0f + 3.0f / 256), 1.0f + 4.0f / 256);
  EXPECT_EQ(round_to_tf32(1.0f + 1.0f / 4096), 1.0f);
  EXPECT_EQ(round_to_tf32(1.0f + 3.0f / 4096), 1.0f + 4.0f / 4096);
  EXPECT_TRUE(std::isnan(round_to_bf16(NAN)));
  EXPECT_TRUE(std::isinf(round_to_tf32(INFINITY)));
}

TEST(MatmulVerify, AcceptsACorrectProductAtEveryPrecision) {
  for (const char* p : {"fp32", "tf32", "bf16"}) {
    const std::int64_t n = 96;
    const Inputs in = make_inputs(p, n, 5);
    std::vector<float> c(in.a.size());
    blocked_product(in.a.data(), in.b.data(), c.data(), n);
    const Verification v = verify_product(p, n, 5, c, 1);
    EXPECT_TRUE(v.ok) << p << ": " << v.detail;
    EXPECT_EQ(v.checked, n * n);  // small n: every entry
  }
}

TEST(MatmulVerify, FlagsAPlantedError) {
  const std::int64_t n = 300;  // sampled check; the planted entry is a corner, always sampled
  const Inputs in = make_inputs("fp32", n, 8);
  std::vector<float> c(in.a.size());
  blocked_product(in.a.data(), in.b.data(), c.data(), n);
  ASSERT_TRUE(verify_product("fp32", n, 8, c, 3).ok);
  c[(n - 1) * n + (n - 1)] += 0.5f;
  const Verification v = verify_product("fp32", n, 8, c, 3);
  EXPECT_FALSE(v.ok);
  EXPECT_GT(v.max_rel_error, v.tolerance);
  EXPECT_NE(v.detail.find("C[299][299]"), std::string::npos) << v.detail;
}

TEST(MatmulVerify, FlagsAnUnwrittenEntryAnywhere) {
  const std::int64_t n = 300;
  const Inputs in = make_inputs("bf16", n, 8);
  std::vector<float> c(in.a.size());
  blocked_product(in.a.data(), in.b.data(), c.data(), n);
  c[12345] = NAN;  // not a sampled entry: the finiteness scan must catch it
  const Verification v = verify_product("bf16", n, 8, c, 3);
  EXPECT_FALSE(v.ok);
  EXPECT_NE(v.detail.find("not finite"), std::string::npos) << v.detail;
}

// check_product is the comparison for C wherever it was read (the GPU workload reads C on the device):
// given the first non-finite entry it names it; given the values at the entries it compares them; given
// a count of values other than the entries' it refuses.
TEST(MatmulVerify, CheckProductFromWhatWasReadOfC) {
  const std::int64_t n = 300;
  const Inputs in = make_inputs("fp32", n, 8);
  std::vector<float> c(in.a.size());
  blocked_product(in.a.data(), in.b.data(), c.data(), n);
  const ProductReference ref = product_reference("fp32", n, 8, 3);
  ProductCheckInput read;
  for (const auto& e : ref.entries) read.at_entries.push_back(c[static_cast<std::size_t>(e.i * n + e.j)]);
  const Verification good = check_product(ref, n, read, "fp32");
  EXPECT_TRUE(good.ok) << good.detail;
  EXPECT_EQ(good.checked, static_cast<std::int64_t>(ref.entries.size()));
  read.at_entries.back() += 1.0f;
  EXPECT_FALSE(check_product(ref, n, read, "fp32").ok);
  read.at_entries.pop_back();
  EXPECT_THROW(check_product(ref, n, read, "fp32"), std::logic_error);
  ProductCheckInput unwritten;
  unwritten.all_finite = false;
  unwritten.first_nonfinite = 2 * 300 + 7;
  unwritten.first_nonfinite_value = NAN;
  const Verification v = check_product(ref, n, unwritten, "fp32");
  EXPECT_FALSE(v.ok);
  EXPECT_NE(v.detail.find("C[2][7] is not finite"), std::string::npos) << v.detail;
}

TEST(MatmulVerify, Tf32ErrorsAreOutsideTheFp32Tolerance) {
  // The fp32 check must be strict enough to notice TF32 arithmetic.
  const std::int64_t n = 128;
  const Inputs in = make_inputs("fp32", n, 21);
  std::vector<float> a = in.a, b = in.b, c(in.a.size());
  for (auto& x : a) x = round_to_tf32(x);
  for (auto& x : b) x = round_to_tf32(x);
  blocked_product(a.data(), b.data(), c.data(), n);
  EXPECT_FALSE(verify_product("fp32", n, 21, c, 1).ok);
  EXPECT_TRUE(verify_product("tf32", n, 21, c, 1).ok);
}

std::unique_ptr<Workload> cpu_matmul(const std::string& precision, std::int64_t size) {
  WorkloadArgs args;
  args.device = DeviceKind::cpu;
  args.precision = precision;
  args.size = size;
  return find_kernel("matmul")->make(args);
}

TEST(MatmulCpuWorkload, RunsAndVerifiesThroughTheRegistry) {
  const KernelInfo* k = find_kernel("matmul");
  ASSERT_NE(k, nullptr);
  for (const auto& p : k->precisions) {
    auto w = cpu_matmul(p, 48);
    w->setup(11);
    w->run();
    w->sync();
    EXPECT_DOUBLE_EQ(w->work().flops, 2.0 * 48 * 48 * 48);
    const Verification v = w->verify();
    EXPECT_TRUE(v.ok) << p << ": " << v.detail;
  }
}

TEST(MatmulCpuWorkload, PoisonedOutputFailsUntilTheNextRun) {
  auto w = cpu_matmul("fp32", 16);
  w->setup(1);
  w->run();
  ASSERT_TRUE(w->verify().ok);
  w->poison_outputs();  // what the harness does before the last repetition
  EXPECT_FALSE(w->verify().ok);
  w->run();
  EXPECT_TRUE(w->verify().ok);
}

TEST(MatmulCpuWorkload, UnrunWorkloadFailsVerification) {
  auto w = cpu_matmul("fp32", 16);
  w->setup(1);  // C poisoned with NaN, never computed
  EXPECT_FALSE(w->verify().ok);
}

// Issue 28: make_inputs draws in chunks on several threads and product_reference sums its entries on
// several threads: the values of the sequential streams and plain dot products.
TEST(ChunkedInputs, AreTheSequentialStreams) {
  const std::int64_t n = 1100;  // 1.21 M elements per matrix: two chunks each
  for (const char* p : {"fp32", "bf16"}) {
    const Inputs in = make_inputs(p, n, 99);
    std::vector<float> a(static_cast<std::size_t>(n * n)), b(a.size());
    fill_uniform(a.data(), a.size(), 99, -1.0f, 1.0f);
    fill_uniform(b.data(), b.size(), 99 ^ 0x5DEECE66Dull, -1.0f, 1.0f);
    for (std::size_t i = 0; i < a.size(); ++i) {
      const bool bf16 = std::string(p) == "bf16";
      ASSERT_EQ(in.a[i], bf16 ? round_to_bf16(a[i]) : a[i]) << p << " A " << i;
      ASSERT_EQ(in.b[i], bf16 ? round_to_bf16(b[i]) : b[i]) << p << " B " << i;
    }
  }
}

// The reference makes, above 256, only the rows and columns its entries need (matmul_inputs.hpp): the
// same products as of the whole matrices, bf16 rounding included.
TEST(ChunkedInputs, ReferenceEntriesArePlainDotProductsOfTheInputs) {
  for (const char* p : {"fp32", "bf16"}) {
    for (const std::int64_t n : {40, 300}) {  // every entry; sampled
      const Inputs in = make_inputs(p, n, 3);
      const ProductReference ref = product_reference(p, n, 3, 4);
      EXPECT_EQ(ref.entries.size(), n <= 256 ? static_cast<std::size_t>(n * n) : std::size_t{4 + 1024});
      for (const auto& e : ref.entries) {
        double sum = 0, magnitude = 0;
        for (std::int64_t k = 0; k < n; ++k) {
          const double prod = double(in.a[e.i * n + k]) * double(in.b[k * n + e.j]);
          sum += prod;
          magnitude += std::fabs(prod);
        }
        ASSERT_EQ(e.ref, sum) << p << " " << n << ": C[" << e.i << "][" << e.j << "]";
        ASSERT_EQ(e.magnitude, magnitude);
      }
      if (n > 256) {
        EXPECT_EQ(ref.entries[0].i, 0);
        EXPECT_EQ(ref.entries[3].j, n - 1);
      }
    }
  }
}

}  // namespace
}  // namespace mpsb::matmul
