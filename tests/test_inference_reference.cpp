// The float64 reference after issue 28's speed-up (register blocks, packed weights, threads) and the
// chunked model generation: the same numbers as the plain sequential loops they replaced.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <vector>

#include "inference_cpu.hpp"
#include "random_inputs.hpp"

namespace mpsb::inference {
namespace {

// The reference as it was computed before: rounded (r) and unrounded (p) passes of the given rows, each
// output the bias plus the products in ascending k, in a plain k-i-j loop.
void plain_reference(const Model& m, const std::vector<std::int64_t>& rows, std::vector<double>& xr,
                     std::vector<double>& xp) {
  const std::int64_t h = m.shape.hidden, n = static_cast<std::int64_t>(rows.size());
  xr.assign(static_cast<std::size_t>(n * h), 0);
  for (std::int64_t r = 0; r < n; ++r) {
    for (std::int64_t k = 0; k < h; ++k) xr[r * h + k] = m.input[rows[r] * h + k];
  }
  xp = xr;
  std::vector<double> yr(xr.size()), yp(xr.size());
  for (std::int64_t l = 0; l < m.shape.layers; ++l) {
    const float* w = m.weights.data() + l * h * h;
    const float* b = m.biases.data() + l * h;
    for (std::int64_t r = 0; r < n; ++r) {
      for (std::int64_t j = 0; j < h; ++j) yr[r * h + j] = yp[r * h + j] = b[j];
    }
    for (std::int64_t k = 0; k < h; ++k) {
      for (std::int64_t r = 0; r < n; ++r) {
        for (std::int64_t j = 0; j < h; ++j) {
          yr[r * h + j] += xr[r * h + k] * double(w[k * h + j]);
          yp[r * h + j] += xp[r * h + k] * double(w[k * h + j]);
        }
      }
    }
    if (l + 1 < m.shape.layers) {
      for (auto& v : yr) v = round_to(static_cast<float>(std::max(v, 0.0)), m.storage);
      for (auto& v : yp) v = std::max(v, 0.0);
    }
    std::swap(xr, yr);
    std::swap(xp, yp);
  }
}

struct RefCase {
  std::int64_t batch, hidden, layers;
};
class BlockedReference : public ::testing::TestWithParam<RefCase> {};

// Odd rows (the one-row blocks), H not a multiple of 4 (the columns past the last block), H over a
// tile's 256 features and over 16 rows (several tiles, so several threads where there are CPUs).
TEST_P(BlockedReference, SumsAreThePlainLoops) {
  const RefCase c = GetParam();
  const Shape shape{c.batch, c.hidden, c.layers};
  for (const Storage s : {Storage::fp16, Storage::bf16}) {
    const Model m = make_model(s, shape, 4242);
    const OutputReference ref = output_reference(s, shape, 4242, 4243);
    std::vector<double> xr, xp;
    plain_reference(m, ref.rows, xr, xp);
    ASSERT_EQ(ref.ref.size(), xr.size());
    // Identical operations in identical order: equal, but for an FMA contraction where the compiler may
    // fuse on one side only (none on x86-64 without -march): 1e-13 is a thousand times below any tolerance.
    for (std::size_t i = 0; i < xr.size(); ++i) {
      ASSERT_NEAR(ref.ref[i], xr[i], 1e-13 * std::max(1.0, std::fabs(xr[i]))) << "element " << i;
    }
  }
}
INSTANTIATE_TEST_SUITE_P(Shapes, BlockedReference,
                         ::testing::Values(RefCase{1, 16, 1}, RefCase{5, 18, 3}, RefCase{7, 37, 2},
                                           RefCase{33, 300, 2}, RefCase{20, 64, 5}));

// make_layer draws its weights in chunks on several threads: the values of one sequential stream.
TEST(ChunkedModel, LayerIsTheSequentialStream) {
  const std::int64_t h = 600;  // 360000 weights: two chunks
  std::vector<float> w(static_cast<std::size_t>(h * h)), b(static_cast<std::size_t>(h));
  make_layer(Storage::fp16, h, 77, 2, w.data(), b.data());
  // The layer's stream seed as inference_cpu.cpp derives it (stream = layer + 1).
  std::uint64_t state = 77 ^ (0xD1B54A32D192ED03ull * 4);
  state = splitmix64(state);
  const float a = std::sqrt(6.0f / static_cast<float>(h));
  for (std::size_t i = 0; i < w.size(); ++i) {
    ASSERT_EQ(w[i], round_to(uniform_float(state, -a, a), Storage::fp16)) << "weight " << i;
  }
  for (std::size_t j = 0; j < b.size(); ++j) {
    ASSERT_EQ(b[j], round_to(uniform_float(state, -0.1f, 0.1f), Storage::fp16)) << "bias " << j;
  }
}

TEST(ChunkedModel, SkipMatchesDrawing) {
  std::uint64_t state = 123;
  for (int i = 0; i < 1000; ++i) splitmix64(state);
  EXPECT_EQ(state, splitmix64_skip(123, 1000));
  std::vector<float> whole(5000);
  fill_uniform(whole.data(), whole.size(), 31, -1.0f, 1.0f);
  for (std::size_t i = 0; i < whole.size(); i += 7) ASSERT_EQ(uniform_at(31, i, -1.0f, 1.0f), whole[i]) << i;
}

// A reference computed once and kept gives the verdicts a fresh one gives, and still catches a planted
// wrong element.
TEST(ChunkedModel, KeptReferenceGivesTheSameVerdicts) {
  const Shape shape{9, 64, 3};
  const Model m = make_model(Storage::fp16, shape, 11);
  std::vector<float> out(static_cast<std::size_t>(shape.batch * shape.hidden));
  forward(m, out.data());
  const OutputReference kept = output_reference(Storage::fp16, shape, 11, 12);
  const Verification fresh = verify_output(Storage::fp16, shape, 11, out.data(), 12);
  const Verification reused = verify_output(kept, shape, out.data());
  EXPECT_TRUE(fresh.ok);
  EXPECT_TRUE(reused.ok);
  EXPECT_EQ(fresh.max_rel_error, reused.max_rel_error);
  EXPECT_EQ(fresh.checked, reused.checked);
  out[5 * 64 + 17] *= 1.1f;  // 10 % off
  EXPECT_FALSE(verify_output(kept, shape, out.data()).ok);
  EXPECT_FALSE(verify_output(Storage::fp16, shape, 11, out.data(), 12).ok);
}

}  // namespace
}  // namespace mpsb::inference
