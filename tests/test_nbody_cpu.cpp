#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <string>
#include <tuple>
#include <vector>

#include "nbody_cpu.hpp"
#include "nbody_launch.hpp"
#include "registry.hpp"

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

TEST(NbodyVerify, AcceptsACorrectStepInBothPrecisions) {
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

TEST(NbodyVerify, FlagsAPlantedAccelerationError) {
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

TEST(NbodyVerify, FlagsANaNAnywhere) {
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

TEST(NbodyVerify, FlagsAnIntegrationInconsistentWithTheAcceleration) {
  Step<float> s(200);
  s.vel_out[4 * 17] += 1e-4f;  // velocities are ~0.1: ~1000 ulps
  Verification v = verify_step(s.view(), 1);
  EXPECT_FALSE(v.ok);
  EXPECT_NE(v.detail.find("body 17"), std::string::npos) << v.detail;
  Step<float> m(200);
  m.pos_out[4 * 3 + 3] *= 2;  // mass changed
  EXPECT_FALSE(verify_step(m.view(), 1).ok);
}

TEST(NbodyVerify, Fp64ToleranceRejectsFloatArithmetic) {
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

TEST(NbodyCpuWorkload, RunsAndVerifiesThroughTheRegistryAtBothPrecisions) {
  const KernelInfo* k = find_kernel("nbody");
  ASSERT_NE(k, nullptr);
  EXPECT_EQ(k->precisions, (std::vector<std::string>{"fp32", "fp64"}));
  for (const auto& p : k->precisions) {
    for (const std::int64_t n : {24, 40, 256}) {
      WorkloadArgs args;
      args.device = DeviceKind::cpu;
      args.precision = p;
      args.size = n;
      auto w = k->make(args);
      w->setup(11);
      for (int i = 0; i < 3; ++i) w->run();  // verify must use the inputs of the last step
      w->sync();
      const Verification v = w->verify();
      EXPECT_TRUE(v.ok) << p << " n=" << n << ": " << v.detail;
      EXPECT_EQ(v.checked, 10 * n);
    }
  }
}

TEST(NbodyCpuWorkload, WorkCountsTheSamplesConvention) {
  const KernelInfo* k = find_kernel("nbody");
  ASSERT_NE(k, nullptr);
  for (const auto& [p, flops, element] : {std::tuple{"fp32", 20.0, 4.0}, std::tuple{"fp64", 30.0, 8.0}}) {
    WorkloadArgs args;
    args.device = DeviceKind::cpu;
    args.precision = p;
    args.size = 1000;
    const Work w = k->make(args)->work();
    EXPECT_DOUBLE_EQ(w.flops, flops * 1000 * 1000) << p;
    EXPECT_DOUBLE_EQ(w.items, 1000.0 * 1000);
    EXPECT_EQ(w.item_unit, "interaction");
    EXPECT_DOUBLE_EQ(w.bytes, 16 * element * 1000) << p;  // 4 values of pos and vel, read and written
  }
  EXPECT_EQ(k->primary, PrimaryMetric::flops);
}

TEST(NbodyCpuWorkload, UnrunWorkloadFailsVerification) {
  for (const char* p : {"fp32", "fp64"}) {
    WorkloadArgs args;
    args.device = DeviceKind::cpu;
    args.precision = p;
    args.size = 16;
    auto w = find_kernel("nbody")->make(args);
    w->setup(1);
    EXPECT_FALSE(w->verify().ok) << p;
  }
}

// Walks the schedule as the force kernel does (chunk by chunk, segment by
// segment) and calls visit(chunk, target block, tile begin, tile end, slot).
template <typename Visit>
void walk_schedule(const Schedule& s, Visit visit) {
  for (std::int64_t c = 0; c < s.chunks; ++c) {
    const std::int64_t end = chunk_begin(s, c + 1);
    for (std::int64_t u = chunk_begin(s, c); u < end;) {
      const std::int64_t tb = u / s.tiles, t_begin = u - tb * s.tiles;
      const std::int64_t t_end = std::min(s.tiles, t_begin + (end - u));
      visit(c, tb, t_begin, t_end, c - first_chunk(s, tb));
      u += t_end - t_begin;
    }
  }
}

// Single-shape option lists, so each (threads, bodies) pair is walked at every N.
std::vector<std::vector<ShapeOption>> single_shapes() {
  std::vector<std::vector<ShapeOption>> lists;
  for (const int threads : {128, 256, 512})
    for (const int bodies : {1, 2, 4}) lists.push_back({ShapeOption{threads, bodies, 5}});
  return lists;
}

// The fp32 shapes (512 x 4, 128 x 4, 128 x 1), each at its __launch_bounds__
// minimum of resident blocks (what the H100 gives the first two).
const auto kFp32Shapes = shape_options<Fp32Shapes>([](auto shape) { return decltype(shape)::min_blocks; });

TEST(Schedule, EveryUnitOnceEverySlotOnceChunksBalanced) {
  for (const int sms : {1, 3, 114, 132}) {
    for (const std::int64_t n : {1, 100, 127, 128, 129, 4096, 5000, 16384, 65536, 100003, 262144, 4194304}) {
      for (const std::vector<ShapeOption>& options : single_shapes()) {
        const Schedule s = plan_schedule(n, sms, options);
        ASSERT_GE(s.chunks, 1);
        EXPECT_EQ(s.shape, 0);
        EXPECT_EQ(s.threads, options[0].threads);
        EXPECT_LE(s.chunks, std::int64_t{sms} * 5);
        EXPECT_GE(s.target_blocks * s.targets_per_block, n);
        EXPECT_LE(s.slots, max_slots(n));
        EXPECT_LE(chunk_begin(s, s.chunks) - chunk_begin(s, s.chunks - 1) - s.units / s.chunks, 1);
        // Per target block: tiles covered in order, slots 0, 1, ... each once.
        std::vector<std::int64_t> next_tile(static_cast<std::size_t>(s.target_blocks), 0);
        std::vector<std::int64_t> next_slot(static_cast<std::size_t>(s.target_blocks), 0);
        walk_schedule(s, [&](std::int64_t, std::int64_t tb, std::int64_t t0, std::int64_t t1, std::int64_t slot) {
          const auto k = static_cast<std::size_t>(tb);
          ASSERT_EQ(t0, next_tile[k]) << "n=" << n << " tb=" << tb;
          ASSERT_GT(t1, t0);
          ASSERT_EQ(slot, next_slot[k]) << "n=" << n << " tb=" << tb;
          next_tile[k] = t1, next_slot[k] = slot + 1;
        });
        for (std::int64_t tb = 0; tb < s.target_blocks; ++tb) {
          ASSERT_EQ(next_tile[static_cast<std::size_t>(tb)], s.tiles) << "n=" << n;
          ASSERT_EQ(next_slot[static_cast<std::size_t>(tb)], slot_count(s, tb)) << "n=" << n;
        }
      }
    }
  }
}

TEST(Schedule, OneFullWaveOnAnH100) {
  // N = 262144, the first fp32 shape (512 x 4, one block per SM): 132 chunks
  // of 496-497 tiles of 512 sources.
  const Schedule big = plan_schedule(262144, 132, kFp32Shapes);
  EXPECT_EQ(big.shape, 0);
  EXPECT_EQ(big.threads, 512);
  EXPECT_EQ(big.bodies_per_thread, 4);
  EXPECT_EQ(big.chunks, 132);
  EXPECT_LE(big.slots, 3);
  EXPECT_EQ(big.units / big.chunks, 496);
  EXPECT_EQ(plan_schedule(16384, 132, kFp32Shapes).shape, 0);  // 256 units: still a full wave
  // Smaller N falls back to shapes with more, smaller units, each at least half a wave.
  const Schedule mid = plan_schedule(8192, 132, kFp32Shapes);  // 512 x 4 would have 64 units
  EXPECT_EQ(mid.shape, 1);
  EXPECT_EQ(mid.threads, 128);
  EXPECT_EQ(mid.bodies_per_thread, 4);
  EXPECT_EQ(mid.chunks, 512);  // 1024 units, at least 2 per chunk so no body gets over 64 partial sums
  EXPECT_GE(2 * mid.chunks, 132 * 4);
  const Schedule small = plan_schedule(4096, 132, kFp32Shapes);  // 128 x 4 would have 256 units
  EXPECT_EQ(small.shape, 2);
  EXPECT_EQ(small.bodies_per_thread, 1);
  EXPECT_GE(2 * small.chunks, 132 * 4);
  // None fills half a wave: the one with the most chunks, here the last.
  const Schedule tiny = plan_schedule(1000, 132, kFp32Shapes);
  EXPECT_EQ(tiny.shape, 2);
  EXPECT_EQ(tiny.chunks, tiny.units);
}

TEST(Schedule, KernelIndexingEmulatedOnTheCpuGivesTheRightAccelerations) {
  // The force and integrate kernels' index arithmetic, run on the host in
  // float: partial sums per slot, then added in slot order.
  for (const auto& [n_case, sms, threads, bodies] :
       {std::tuple{1000, 3, 128, 4}, std::tuple{1000, 7, 128, 1}, std::tuple{129, 2, 128, 2},
        std::tuple{3000, 1, 128, 4}, std::tuple{2100, 2, 512, 4}, std::tuple{1100, 3, 256, 2}}) {
    const int n = n_case;  // a plain variable: lambdas may capture it in C++17 (a structured binding: C++20)
    const Schedule s = plan_schedule(n, sms, std::vector<ShapeOption>{{threads, bodies, 2}});
    Step<float> step(n);
    std::vector<float> partial(static_cast<std::size_t>(4 * n * s.slots), NAN);
    walk_schedule(s, [&](std::int64_t, std::int64_t tb, std::int64_t t0, std::int64_t t1, std::int64_t slot) {
      for (std::int64_t i = tb * s.targets_per_block; i < std::min<std::int64_t>(n, (tb + 1) * s.targets_per_block);
           ++i) {
        // Sources of tiles [t0, t1), one at a time beside the (massless) target: the CPU reference gives
        // each pull, summed in float as the kernel's slot does. Pairs keep this linear in the sources (a
        // body list of the whole range per target made the test cubic in n: 70 s).
        float pair[8], pair_acc[8], sum[3] = {0, 0, 0};
        std::copy_n(step.pos_in.begin() + 4 * i, 4, pair + 4);
        pair[7] = 0;
        for (std::int64_t j = t0 * s.threads; j < std::min<std::int64_t>(n, t1 * s.threads); ++j) {
          std::copy_n(step.pos_in.begin() + 4 * j, 4, pair);
          compute_accelerations(pair, std::int64_t{2}, pair_acc);
          for (int c = 0; c < 3; ++c) sum[c] += pair_acc[4 + c];
        }
        for (int c = 0; c < 3; ++c) partial[static_cast<std::size_t>(4 * (slot * n + i) + c)] = sum[c];
      }
    });
    for (std::int64_t i = 0; i < n; ++i) {
      float a[3] = {0, 0, 0};
      for (std::int64_t k = 0; k < slot_count(s, i / s.targets_per_block); ++k)
        for (int c = 0; c < 3; ++c) a[c] += partial[static_cast<std::size_t>(4 * (k * n + i) + c)];
      for (int c = 0; c < 3; ++c) step.acc[4 * i + c] = a[c];
    }
    integrate(step.pos_in.data(), step.vel_in.data(), step.acc.data(), n, step.pos_out.data(), step.vel_out.data());
    const Verification v = verify_step(step.view(), 1);
    EXPECT_TRUE(v.ok) << "n=" << n << " sms=" << sms << " threads=" << threads << " bodies=" << bodies
                      << " chunks=" << s.chunks << ": "
                      << v.detail;
  }
}

TEST(NbodyKernelInfo, SizesAndDeviceMemory) {
  const KernelInfo* k = find_kernel("nbody");
  ASSERT_NE(k, nullptr);
  EXPECT_EQ(k->default_precisions, std::vector<std::string>{"fp32"});
  for (const auto n : k->default_gpu_sizes) EXPECT_LE(n, k->max_size);
  // Four state arrays, accelerations, and at most 64 partial-sum arrays of 4 values per body.
  EXPECT_DOUBLE_EQ(k->device_bytes("fp32", 4096, {}), (5 + 32) * 16.0 * 4096);
  EXPECT_DOUBLE_EQ(k->device_bytes("fp64", 262144, {}), (5 + 64) * 32.0 * 262144);
}

}  // namespace
}  // namespace mpsb::nbody
