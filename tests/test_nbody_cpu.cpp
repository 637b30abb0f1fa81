#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <vector>

#include "nbody_cpu.hpp"

namespace mpsb::nbody {
namespace {

// Independent float64 all-pairs sum: accelerations (3 per body) and, per body,
// the sum of the terms' magnitudes, to which float errors are proportional.
template <typename T>
void naive_reference(const std::vector<T>& pos, std::int64_t n, std::vector<double>& acc,
                     std::vector<double>& bound) {
  const double eps2 = static_cast<T>(kSoftening2);
  acc.assign(static_cast<std::size_t>(3 * n), 0.0);
  bound.assign(static_cast<std::size_t>(n), 0.0);
  for (std::int64_t i = 0; i < n; ++i) {
    for (std::int64_t j = 0; j < n; ++j) {
      if (i == j) continue;
      double r[3], r2 = eps2;
      for (int c = 0; c < 3; ++c) {
        r[c] = double(pos[4 * j + c]) - double(pos[4 * i + c]);
        r2 += r[c] * r[c];
      }
      const double f = double(pos[4 * j + 3]) / std::pow(r2, 1.5);
      for (int c = 0; c < 3; ++c) acc[3 * i + c] += f * r[c];
      bound[i] += f * std::sqrt(r2 - eps2);
    }
  }
}

template <typename T>
void expect_matches_reference(std::int64_t n, double tol) {
  const Bodies<T> b = make_bodies<T>(n, 99);
  std::vector<T> acc(b.pos.size(), T(NAN));
  compute_accelerations(b.pos.data(), n, acc.data());
  std::vector<double> ref, bound;
  naive_reference(b.pos, n, ref, bound);
  for (std::int64_t i = 0; i < n; ++i) {
    for (int c = 0; c < 3; ++c) {
      ASSERT_NEAR(acc[4 * i + c], ref[3 * i + c], tol * bound[i]) << "body " << i << " component " << c;
    }
    ASSERT_EQ(acc[4 * i + 3], T(0));
  }
}

class Accelerations : public ::testing::TestWithParam<std::int64_t> {};

TEST_P(Accelerations, MatchNaiveFloat64SumInBothPrecisions) {
  expect_matches_reference<float>(GetParam(), 1e-6);
  expect_matches_reference<double>(GetParam(), 1e-14);
}
// Sizes around the 8-lane split of the CPU loop catch a lost tail or lane.
INSTANTIATE_TEST_SUITE_P(Sizes, Accelerations, ::testing::Values(1, 2, 7, 8, 9, 17, 100, 257));

TEST(Accelerations, TwoBodiesByHand) {
  // m = 1 at the origin, m = 2 at x = 1: a_0 = 2 / 1.01^1.5, a_1 = -1 / 1.01^1.5.
  const std::vector<double> pos = {0, 0, 0, 1, 1, 0, 0, 2};
  std::vector<double> acc(8, NAN);
  compute_accelerations(pos.data(), 2, acc.data());
  const double f = 1.0 / std::pow(1.01, 1.5);
  EXPECT_NEAR(acc[0], 2 * f, 1e-15);
  EXPECT_NEAR(acc[4], -f, 1e-15);
  for (int k : {1, 2, 5, 6}) EXPECT_EQ(acc[k], 0.0);
}

TEST(Integrate, FollowsTheDampedEulerRule) {
  const std::vector<double> pos = {1, 2, 3, 0.5}, vel = {0.1, -0.2, 0.3, 0}, acc = {1, 0, -1, 0};
  std::vector<double> p(4), v(4);
  integrate(pos.data(), vel.data(), acc.data(), 1, p.data(), v.data());
  const double dt = kTimeStep, d = kDamping;
  EXPECT_DOUBLE_EQ(v[0], (0.1 + dt) * d);
  EXPECT_DOUBLE_EQ(v[2], (0.3 - dt) * d);
  EXPECT_DOUBLE_EQ(p[1], 2 + v[1] * dt);
  EXPECT_EQ(p[3], 0.5);  // mass carried over
}

// One correct step of n bodies, kept for the verification tests to damage.
template <typename T>
struct Step {
  explicit Step(std::int64_t count) : n(count) {
    const Bodies<T> b = make_bodies<T>(n, 5);
    pos_in = b.pos, vel_in = b.vel;
    acc.resize(pos_in.size()), pos_out.resize(pos_in.size()), vel_out.resize(pos_in.size());
    compute_accelerations(pos_in.data(), n, acc.data());
    integrate(pos_in.data(), vel_in.data(), acc.data(), n, pos_out.data(), vel_out.data());
  }
  // Re-integrates body i from its (possibly changed) acceleration.
  void reintegrate(std::int64_t i) {
    integrate(&pos_in[4 * i], &vel_in[4 * i], &acc[4 * i], 1, &pos_out[4 * i], &vel_out[4 * i]);
  }
  StepView<T> view() const {
    StepView<T> s;
    s.n = n, s.pos_in = pos_in.data(), s.vel_in = vel_in.data(), s.acc = acc.data();
    s.pos_out = pos_out.data(), s.vel_out = vel_out.data();
    return s;
  }
  std::int64_t n;
  std::vector<T> pos_in, vel_in, acc, pos_out, vel_out;
};

TEST(Verify, AcceptsACorrectStepInBothPrecisions) {
  const Step<float> f(300);
  const Verification vf = verify_step(f.view(), 1);
  EXPECT_TRUE(vf.ok) << vf.detail;
  EXPECT_EQ(vf.checked, 10 * 300);  // small n: every body
  EXPECT_GT(vf.max_rel_error, 0);   // float arithmetic does differ from float64
  const Step<double> d(300);
  const Verification vd = verify_step(d.view(), 1);
  EXPECT_TRUE(vd.ok) << vd.detail;
  const Step<float> sampled(3000);
  const Verification vs = verify_step(sampled.view(), 1);
  EXPECT_TRUE(vs.ok) << vs.detail;
  EXPECT_GT(vs.checked, 10 * 60);
  EXPECT_LT(vs.checked, 10 * 3000);
}

TEST(Verify, FlagsAPlantedAccelerationError) {
  // 0.1% on one component, integration kept consistent: only the force check can see it.
  for (const std::int64_t n : {300, 3000}) {  // full check, then sampled (body n-1 always is)
    Step<float> s(n);
    const std::int64_t i = n - 1;
    s.acc[4 * i + 1] += 1e-3f * std::fabs(s.acc[4 * i + 1]) + 1e-4f;
    s.reintegrate(i);
    const Verification v = verify_step(s.view(), 1);
    EXPECT_FALSE(v.ok) << n;
    EXPECT_GT(v.max_rel_error, v.tolerance);
    EXPECT_TRUE(std::isfinite(v.max_rel_error));
    EXPECT_NE(v.detail.find("acceleration of body " + std::to_string(i)), std::string::npos) << v.detail;
  }
}

TEST(Verify, FlagsANaNAnywhere) {
  Step<float> s(3000);
  s.acc[4 * 1234 + 2] = NAN;  // most likely not sampled: the finiteness scan must catch it
  Verification v = verify_step(s.view(), 1);
  EXPECT_FALSE(v.ok);
  EXPECT_NE(v.detail.find("acceleration of body 1234 is not finite"), std::string::npos) << v.detail;
  Step<double> d(50);
  d.pos_out[4 * 7 + 3] = NAN;
  v = verify_step(d.view(), 1);
  EXPECT_FALSE(v.ok);
  EXPECT_NE(v.detail.find("position of body 7"), std::string::npos) << v.detail;
}

TEST(Verify, FlagsAnIntegrationInconsistentWithTheAcceleration) {
  Step<float> s(200);
  s.vel_out[4 * 17] += 1e-4f;  // velocities are ~0.1: ~1000 ulps
  Verification v = verify_step(s.view(), 1);
  EXPECT_FALSE(v.ok);
  EXPECT_NE(v.detail.find("body 17"), std::string::npos) << v.detail;
  Step<float> m(200);
  m.pos_out[4 * 3 + 3] *= 2;  // mass changed
  EXPECT_FALSE(verify_step(m.view(), 1).ok);
}

TEST(Verify, Fp64ToleranceRejectsFloatArithmetic) {
  // The fp64 check must be strict enough to notice a step done in float.
  const Step<float> f(200);
  Step<double> d(200);
  for (std::size_t k = 0; k < d.acc.size(); ++k) {
    d.pos_in[k] = f.pos_in[k], d.vel_in[k] = f.vel_in[k], d.acc[k] = f.acc[k];
  }
  integrate(d.pos_in.data(), d.vel_in.data(), d.acc.data(), d.n, d.pos_out.data(), d.vel_out.data());
  const Verification v = verify_step(d.view(), 1);
  EXPECT_FALSE(v.ok);
  EXPECT_GT(v.max_rel_error, v.tolerance);
}

}  // namespace
}  // namespace mpsb::nbody
