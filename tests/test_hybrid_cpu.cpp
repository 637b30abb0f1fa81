#include <gtest/gtest.h>

#include <cmath>
#include <stdexcept>
#include <vector>

#include <cuda_runtime_api.h>

#include "gpu_test.hpp"
#include "hybrid_cpu.hpp"
#include "hybrid_workload.hpp"
#include "random_inputs.hpp"
#include "registry.hpp"
#include "runtime/check.hpp"

namespace mpsb::hybrid {
namespace {

// Naive float64 references, written from the model's description rather than
// from the implementation: a clamped-index stencil and a textbook RK4.
std::vector<double> naive_sweeps(std::vector<double> u, const std::vector<float>& forcing, int sweeps) {
  const auto n = static_cast<std::int64_t>(u.size());
  for (int s = 0; s < sweeps; ++s) {
    std::vector<double> next(u.size());
    for (std::int64_t i = 0; i < n; ++i) {
      const double left = u[std::max<std::int64_t>(i - 1, 0)];
      const double right = u[std::min<std::int64_t>(i + 1, n - 1)];
      next[i] = u[i] + 0.25 * (left - 2 * u[i] + right) + 0.1 * (forcing[i] - u[i]);
    }
    u = next;
  }
  return u;
}

double naive_react(double u) {
  auto f = [](double x) { return x * (1 - x) * (x - 0.3); };
  const double h = 1.0 / kReactionSteps;
  for (int s = 0; s < kReactionSteps; ++s) {
    const double k1 = f(u), k2 = f(u + h / 2 * k1), k3 = f(u + h / 2 * k2), k4 = f(u + h * k3);
    u += h / 6 * (k1 + 2 * k2 + 2 * k3 + k4);
  }
  return u;
}

std::vector<float> uniform(std::int64_t n, std::uint64_t seed) {
  std::vector<float> v(static_cast<std::size_t>(n));
  fill_uniform(v.data(), v.size(), seed, 0.0f, 1.0f);
  return v;
}

std::vector<float> step(const std::vector<float>& prev, const std::vector<float>& forcing, int sweeps) {
  std::vector<float> next(prev.size(), NAN), scratch(prev.size(), NAN);
  cpu_step(prev.data(), forcing.data(), next.data(), scratch.data(), static_cast<std::int64_t>(prev.size()), sweeps);
  return next;
}


class CpuStep : public ::testing::TestWithParam<std::tuple<std::int64_t, int>> {};

TEST_P(CpuStep, MatchesNaiveSweeps) {
  const auto [n, sweeps] = GetParam();
  const auto prev = uniform(n, 1), forcing = uniform(n, 2);
  const auto next = step(prev, forcing, sweeps);
  const auto ref = naive_sweeps(std::vector<double>(prev.begin(), prev.end()), forcing, sweeps);
  for (std::size_t i = 0; i < next.size(); ++i) ASSERT_NEAR(next[i], ref[i], 1e-6) << "cell " << i;
}
// n = 1 and 2 exercise the zero-flux ends; odd and even sweep counts the ping-pong.
INSTANTIATE_TEST_SUITE_P(SizesAndSweeps, CpuStep,
                         ::testing::Combine(::testing::Values<std::int64_t>(1, 2, 3, 24, 40, 1000),
                                            ::testing::Values(1, 2, 4, 5)));

TEST(CpuStep, DependsOnThePreviousOffloadResult) {
  const std::int64_t n = 64, j = 30;
  const auto prev = uniform(n, 3), forcing = uniform(n, 4);
  for (int sweeps : {kBalancedSweeps, kCpuHeavySweeps}) {
    auto changed = prev;
    changed[j] += 0.25f;
    const auto a = step(prev, forcing, sweeps), b = step(changed, forcing, sweeps);
    for (std::int64_t i = 0; i < n; ++i) {
      // Information travels one cell per sweep, no further.
      if (std::abs(i - j) <= sweeps) {
        EXPECT_NE(a[i], b[i]) << "cell " << i << ", " << sweeps << " sweeps";
      } else {
        EXPECT_EQ(a[i], b[i]) << "cell " << i << ", " << sweeps << " sweeps";
      }
    }
  }
}

TEST(React, FloatAndDoubleMatchANaiveRk4) {
  const auto u = uniform(20000, 5);
  double max_err = 0;
  for (float x : u) {
    const double ref = naive_react(x);
    EXPECT_NEAR(react(static_cast<double>(x)), ref, 1e-12) << x;
    max_err = std::max(max_err, std::fabs(react(x) - ref));
  }
  EXPECT_LT(max_err, kTolerance);
  EXPECT_GT(max_err, 0.0);  // fp32 really is fp32
}

TEST(Iteration, CpuWorkloadFollowsTheNaiveModel) {
  // The workload's own data flow: input k+1 = sweeps(react(input k)), from the seeded initial field.
  const std::int64_t n = 40;
  for (const char* p : {"fp32", "fp32-cpu-heavy"}) {
    auto w = make_hybrid(DeviceKind::cpu, p, n);
    w->setup(17);
    std::vector<float> state(n), forcing(n);
    fill_initial(state.data(), forcing.data(), n, 17);
    std::vector<double> u(state.begin(), state.end());
    for (int it = 0; it < 4; ++it) {
      if (it > 0) {
        for (auto& x : u) x = naive_react(x);
      }
      u = naive_sweeps(u, forcing, sweeps_for(p));
      w->run();
    }
    const float* input = dynamic_cast<const HybridWorkload&>(*w).last_input();
    for (std::int64_t i = 0; i < n; ++i) ASSERT_NEAR(input[i], u[i], 1e-4) << p << " cell " << i;
    EXPECT_TRUE(w->verify().ok) << p;
  }
}

TEST(HybridVerify, AcceptsACorrectResult) {
  for (std::int64_t n : {std::int64_t{40}, kFullCheckMaxCells, kFullCheckMaxCells + 1, std::int64_t{100000}}) {
    const auto in = uniform(n, 6);
    std::vector<float> out(in.size());
    react_all(in.data(), out.data(), n);
    const Verification v = verify_reaction(in.data(), out.data(), n, 1);
    EXPECT_TRUE(v.ok) << v.detail;
    EXPECT_GT(v.max_rel_error, 0.0);
    EXPECT_EQ(v.checked, n <= kFullCheckMaxCells ? n : kSampledCells + 2);
  }
}

TEST(HybridVerify, FlagsAPlantedError) {
  const std::int64_t n = 100000;  // sampled check; the last cell is always checked
  const auto in = uniform(n, 7);
  std::vector<float> out(in.size());
  react_all(in.data(), out.data(), n);
  out[n - 1] += 1e-3f;
  const Verification v = verify_reaction(in.data(), out.data(), n, 1);
  EXPECT_FALSE(v.ok);
  EXPECT_GT(v.max_rel_error, v.tolerance);
  EXPECT_NE(v.detail.find("out[99999]"), std::string::npos) << v.detail;
}

TEST(HybridVerify, FlagsANaNAnywhere) {
  const std::int64_t n = 100000;
  const auto in = uniform(n, 8);
  std::vector<float> out(in.size());
  react_all(in.data(), out.data(), n);
  out[12345] = NAN;  // almost surely not sampled: the finiteness scan must catch it
  const Verification v = verify_reaction(in.data(), out.data(), n, 1);
  EXPECT_FALSE(v.ok);
  EXPECT_NE(v.detail.find("not finite"), std::string::npos) << v.detail;
}

TEST(HybridVerify, FlagsAnOffloadThatDidNothing) {
  const std::int64_t n = 40;
  const auto in = uniform(n, 9);
  EXPECT_FALSE(verify_reaction(in.data(), in.data(), n, 1).ok);  // out = in: the kernel never computed
  std::vector<float> poisoned_in(in.size(), NAN), out(in.size(), 0.5f);
  EXPECT_FALSE(verify_reaction(poisoned_in.data(), out.data(), n, 1).ok);  // input never written
}

TEST(HybridCpuWorkload, VerifiesThroughTheRegistryAtEveryPrecision) {
  const KernelInfo* k = find_kernel("hybrid");
  ASSERT_NE(k, nullptr);
  EXPECT_EQ(k->primary, PrimaryMetric::items);
  for (const auto& p : k->precisions) {
    for (std::int64_t n : {std::int64_t{1}, std::int64_t{24}, std::int64_t{40}, k->default_cpu_sizes.front()}) {
      auto w = make_hybrid(DeviceKind::cpu, p, n);
      w->setup(11);
      for (int i = 0; i < 3; ++i) w->run();
      w->sync();
      const Verification v = w->verify();
      EXPECT_TRUE(v.ok) << p << " size " << n << ": " << v.detail;
      EXPECT_EQ(v.checked, n);
      const Work work = w->work();
      EXPECT_EQ(work.items, 1);
      EXPECT_EQ(work.item_unit, "iteration");
      EXPECT_DOUBLE_EQ(work.bytes, 8.0 * static_cast<double>(n));
      EXPECT_DOUBLE_EQ(work.flops, static_cast<double>(n) * (8.0 * sweeps_for(p) + 28.0 * kReactionSteps));
    }
  }
}

TEST(HybridCpuWorkload, UnrunWorkloadFailsVerification) {
  auto w = make_hybrid(DeviceKind::cpu, "fp32", 24);
  w->setup(1);
  EXPECT_FALSE(w->verify().ok);
}

TEST(HybridCpuWorkload, DetailsReportBothPhases) {
  auto w = make_hybrid(DeviceKind::cpu, "fp32-cpu-heavy", 1024);
  w->setup(2);
  EXPECT_TRUE(w->details().empty());
  for (int i = 0; i < 3; ++i) w->run();
  const auto d = w->details();
  ASSERT_EQ(d.size(), 2u);
  EXPECT_EQ(d[0].first, "cpu_phase_s");
  EXPECT_EQ(d[1].first, "gpu_phase_s");
  EXPECT_GT(d[0].second, 0.0);
  EXPECT_GT(d[1].second, 0.0);
  // 1024 cells: 4 sweeps take microseconds, the scalar RK4 offload milliseconds.
  EXPECT_LT(d[0].second, d[1].second);
}

TEST(PhaseClock, ExcludesTheWarmUpRun) {
  using std::chrono::milliseconds;
  PhaseClock c;
  c.add(milliseconds(100), milliseconds(200));
  ASSERT_EQ(c.details().size(), 2u);
  EXPECT_DOUBLE_EQ(c.details()[0].second, 0.1);  // only one run: that one
  c.add(milliseconds(2), milliseconds(4));
  c.add(milliseconds(4), milliseconds(8));
  EXPECT_DOUBLE_EQ(c.details()[0].second, 0.003);
  EXPECT_DOUBLE_EQ(c.details()[1].second, 0.006);
}

TEST(Precision, NamesTheCpuShare) {
  EXPECT_EQ(sweeps_for("fp32"), kBalancedSweeps);
  EXPECT_EQ(sweeps_for("fp32-cpu-heavy"), 4 * kBalancedSweeps);
  EXPECT_THROW(sweeps_for("bf16"), std::invalid_argument);
  EXPECT_EQ(find_kernel("hybrid")->precisions, (std::vector<std::string>{"fp32", "fp32-cpu-heavy"}));
}

// On a GPU: the GPU workload must follow the same trajectory as the CPU one,
// which checks its wiring (copy back, next CPU phase reading it), not just one
// offload. Skips where no GPU is usable.
TEST(GpuWorkload, FollowsTheCpuTrajectory) {
  if (!gpu_usable()) GTEST_SKIP() << "no usable CUDA GPU";
  MPSB_CUDA(cudaSetDevice(0));
  cudaStream_t stream = nullptr;
  MPSB_CUDA(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
  for (const char* p : {"fp32", "fp32-cpu-heavy"}) {
    const std::int64_t n = 1000;
    auto gpu = make_hybrid(DeviceKind::gpu, p, n, stream);
    auto cpu = make_hybrid(DeviceKind::cpu, p, n);
    gpu->setup(23);
    cpu->setup(23);
    for (int i = 0; i < 5; ++i) {
      gpu->run();
      cpu->run();
    }
    gpu->sync();
    EXPECT_TRUE(gpu->verify().ok) << p;
    const float* g = dynamic_cast<const HybridWorkload&>(*gpu).last_input();
    const float* c = dynamic_cast<const HybridWorkload&>(*cpu).last_input();
    for (std::int64_t i = 0; i < n; ++i) ASSERT_NEAR(g[i], c[i], 1e-4) << p << " cell " << i;
    const auto d = gpu->details();
    ASSERT_EQ(d.size(), 2u);
    EXPECT_GT(d[0].second, 0.0);
    EXPECT_GT(d[1].second, 0.0);
  }
  MPSB_CUDA(cudaStreamDestroy(stream));
}

}  // namespace
}  // namespace mpsb::hybrid
