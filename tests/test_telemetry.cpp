// The GPU telemetry (issue 27): the energy counter's arithmetic on known
// reads, the scripted fake (MPSBENCH_FAKE_NVML), the background monitor on the
// fake, the clock figures of a repetition, and the real NVML monitor where a
// GPU is usable (skipped elsewhere); a broken counter's figures refused
// (issue 36).
#include <gtest/gtest.h>

#include <cuda_runtime_api.h>

#include <chrono>
#include <cmath>
#include <optional>
#include <string>
#include <thread>

#include "measure/gpu_watch.hpp"
#include "gpu_test.hpp"
#include "registry.hpp"
#include "runtime/check.hpp"
#include "runtime/steady_clock.hpp"
#include "sharing/device.hpp"
#include "telemetry/energy_meter.hpp"
#include "telemetry/fake_counters.hpp"
#include "telemetry/gpu_monitor.hpp"

namespace mpsb {
namespace {

// Instant reads every `step` from `t0` of a counter that gains `per_tick_mj` at every multiple of
// `tick` plus `phase`.
std::vector<CounterRead> reads_of(double t0, double t1, double step, double tick, double phase,
                                  std::uint64_t per_tick_mj) {
  std::vector<CounterRead> reads;
  for (int i = 0; t0 + i * step <= t1 + 1e-12; ++i) {
    const double t = t0 + i * step;
    const auto ticks = static_cast<std::uint64_t>((t - phase) / tick);
    reads.push_back({t, t, 5000 + ticks * per_tick_mj});
  }
  return reads;
}

TEST(EnergyMeter, EdgesLieBetweenTheReadsThatDiffer) {
  const std::vector<CounterRead> reads{{0.00, 0.004, 100}, {0.01, 0.014, 100}, {0.02, 0.024, 130}, {0.03, 0.034, 90},
                                       {0.04, 0.044, 160}};
  const auto edges = counter_edges(reads);
  ASSERT_EQ(edges.size(), 2u);  // 100 -> 130, and 90 -> 160 (the decrease is no edge)
  EXPECT_DOUBLE_EQ(edges[0].earliest_s, 0.01);
  EXPECT_DOUBLE_EQ(edges[0].latest_s, 0.024);
  EXPECT_EQ(edges[0].mj_after, 130u);
  EXPECT_DOUBLE_EQ(edges[0].half_width(), 0.007);
  EXPECT_DOUBLE_EQ(edges[1].earliest_s, 0.03);
}

TEST(EnergyMeter, KnownPowerComesBackExactlyWithItsUncertainty) {
  // 250 W: 25 J per 0.1 s tick; ticks at 0.005 + k 0.1, reads every 0.01 s: every edge is bracketed by
  // reads 0.005 s either side of the tick.
  const auto reads = reads_of(0.0, 2.0, 0.01, 0.1, 0.005, 25000);
  const PowerEstimate p = estimate_power(reads, 0.2, 1.2, 0.2);
  ASSERT_TRUE(p.available) << p.reason;
  EXPECT_NEAR(p.mean_power_w, 250.0, 1e-9);
  EXPECT_NEAR(p.span_s, 0.9, 1e-9);  // edges at 0.205 and 1.105
  EXPECT_EQ(p.ticks, 10);
  EXPECT_FALSE(p.extended);
  EXPECT_NEAR(p.uncertainty, (0.005 + 0.005) / 0.9 + 2.0 / 225000.0, 1e-12);
}

TEST(EnergyMeter, AShortSpanBorrowsItsFirstUpdateFromTheWarmup) {
  const auto reads = reads_of(0.0, 1.0, 0.01, 0.1, 0.005, 20000);  // 200 W
  // [0.51, 0.59] holds no update: unavailable, and the reason points to the option.
  PowerEstimate p = estimate_power(reads, 0.51, 0.59, 0.51);
  EXPECT_FALSE(p.available);
  EXPECT_NE(p.reason.find("--energy-min-span"), std::string::npos) << p.reason;
  // [0.45, 0.58] holds one (0.505): with the warm-up from 0.3 the first is 0.305.
  p = estimate_power(reads, 0.45, 0.58, 0.45);
  EXPECT_FALSE(p.available);
  p = estimate_power(reads, 0.45, 0.58, 0.3);
  ASSERT_TRUE(p.available) << p.reason;
  EXPECT_TRUE(p.extended);
  EXPECT_NEAR(p.mean_power_w, 200.0, 1e-9);
  EXPECT_NEAR(p.span_s, 0.2, 1e-9);
}

// A counter no GPU could have given (issue 36): about 20 kW is refused with the reason; 1.4 kW (the largest GPUs
// of 2026) is kept.
TEST(EnergyMeter, APowerNoGpuDrawsIsABrokenCounter) {
  PowerEstimate p = estimate_power(reads_of(0.0, 1.0, 0.01, 0.1, 0.005, 2'000'000), 0.0, 1.0, 0.0);
  EXPECT_FALSE(p.available);
  EXPECT_NE(p.reason.find("a broken counter"), std::string::npos) << p.reason;
  EXPECT_NE(p.reason.find("2e+04 W"), std::string::npos) << p.reason;
  p = estimate_power(reads_of(0.0, 1.0, 0.01, 0.1, 0.005, 140'000), 0.0, 1.0, 0.0);
  ASSERT_TRUE(p.available) << p.reason;
  EXPECT_NEAR(p.mean_power_w, 1400.0, 1e-9);
}

// GPM figures are percentages (issue 36): one outside 0-100 or not finite means the samples cannot be trusted,
// so no figure of them is kept, and the reason names each bad one.
TEST(GpmCheck, AFigureOutsideAPercentageLeavesNoFigure) {
  GpmFigures f{250.0, 40.0, -3.0, 10.0};
  std::string why = "GPM metric 5: Not Supported (3)";
  EXPECT_FALSE(check_gpm_figures(f, why));
  EXPECT_FALSE(f.sm_active || f.sm_occupancy || f.dram_bw || f.tensor_active);
  EXPECT_EQ(why, "GPM metric 5: Not Supported (3); GPM gave SM active 250%, DRAM bandwidth -3%, outside 0-100%: "
                 "a broken counter, so no figure of these samples is used");
  f = GpmFigures{std::nan(""), 40.0, 30.0, 10.0};
  why.clear();
  EXPECT_FALSE(check_gpm_figures(f, why));
  EXPECT_NE(why.find("SM active nan%"), std::string::npos) << why;
  f = GpmFigures{100.0, 0.0, std::nullopt, 50.0};
  why.clear();
  EXPECT_TRUE(check_gpm_figures(f, why));
  EXPECT_EQ(f.sm_active, std::optional<double>(100.0));
  EXPECT_FALSE(f.dram_bw.has_value());
  EXPECT_TRUE(why.empty());
}

// Every source goes through the check: the scripted fake's broken counter reaches no caller.
TEST(GpmCheck, AFakesBrokenCounterIsCheckedLikeNvmls) {
  FakeGpu g;
  g.uuid = "GPU-broken";
  g.figures = GpmFigures{80.0, 40.0, 30.0, 101.0};
  auto counters = make_fake_counters(g);
  std::string why;
  const auto first = counters->gpm_sample(why);
  const auto second = counters->gpm_sample(why);
  ASSERT_TRUE(first && second) << why;
  const GpmFigures f = counters->gpm_figures(*first, *second, why);
  EXPECT_FALSE(f.sm_active || f.sm_occupancy || f.dram_bw || f.tensor_active);
  EXPECT_NE(why.find("tensor active 101%"), std::string::npos) << why;
}

TEST(FakeNvml, ParsesDefaultsAndRefusesNonsense) {
  const FakeNvml fake = parse_fake_nvml(R"({"gpus": [{"uuid": "GPU-a"}, {"uuid": "GPU-b", "power_w": 100,
      "energy": "no_permission", "gpm": "not_supported"}], "cpu_device_as": "GPU-a"})");
  ASSERT_EQ(fake.gpus.size(), 2u);
  EXPECT_EQ(fake.gpus[1].index, 1);
  EXPECT_DOUBLE_EQ(fake.gpus[0].power_w, 250);
  EXPECT_EQ(fake.cpu_device_as, std::optional<std::string>("GPU-a"));
  auto a = make_fake_counters(fake.gpus[0]);
  auto b = make_fake_counters(fake.gpus[1]);
  EXPECT_TRUE(a->energy_problem().empty());
  EXPECT_NE(b->energy_problem().find("Insufficient Permissions"), std::string::npos);
  EXPECT_NE(b->gpm_problem().find("Not Supported"), std::string::npos);
  std::uint64_t mj = 0;
  EXPECT_FALSE(b->energy_mj(mj));
  std::string why;
  EXPECT_EQ(b->gpm_sample(why), nullptr);
  EXPECT_FALSE(why.empty());
  EXPECT_THROW(parse_fake_nvml(R"({"gpus": [{"uuid": "x", "tick_s": 0}]})"), std::exception);
  EXPECT_THROW(parse_fake_nvml(R"({"gpus": [{"uuid": "x", "energy": "maybe"}]})"), std::exception);
  EXPECT_THROW(parse_fake_nvml(R"({"gpus": [{"power_w": 3}]})"), std::exception);
}

TEST(FakeNvml, TheCounterGrowsByWholeTicks) {
  FakeGpu g;
  g.power_w = 300;
  g.tick_s = 0.1;
  EXPECT_EQ(g.energy_mj_at(10.05) - g.energy_mj_at(9.95), 30000u);
  EXPECT_EQ(g.energy_mj_at(10.09), g.energy_mj_at(10.01));
}

TEST(GpuMonitor, MetersTheFakesPowerWithinItsUncertainty) {
  FakeGpu g;
  g.uuid = "GPU-fake";
  g.power_w = 180;
  g.tick_s = 0.02;
  g.call_s = 0.001;
  GpuMonitor monitor(make_fake_counters(g));
  const double begin = now_seconds();
  monitor.resume();
  std::this_thread::sleep_for(std::chrono::milliseconds(300));
  monitor.pause();
  const double end = now_seconds();
  const PowerEstimate p = estimate_power(monitor.energy_reads(begin, end), begin, end, begin);
  ASSERT_TRUE(p.available) << p.reason;
  EXPECT_GT(p.ticks, 5);
  EXPECT_NEAR(p.mean_power_w, 180.0, 180.0 * p.uncertainty + 1e-9);
  const auto clocks = monitor.clock_samples(begin, end);
  ASSERT_FALSE(clocks.empty());
  EXPECT_TRUE(clocks.front().clock_ok);
  EXPECT_DOUBLE_EQ(clocks.front().mhz, 1980.0);
  // Paused: nothing more is read.
  const std::size_t reads = monitor.energy_reads(begin, 1e300).size();
  std::this_thread::sleep_for(std::chrono::milliseconds(30));
  EXPECT_EQ(monitor.energy_reads(begin, 1e300).size(), reads);
  monitor.forget_before(1e300);
  EXPECT_TRUE(monitor.energy_reads(0, 1e300).empty());
}

TEST(GpuWatch, ClockWindowLeavesIdleSamplesOutOfTheMean) {
  const std::vector<ClockSample> samples{{1.0, true, 1800, true, 0},
                                         {1.1, true, 300, true, clock_event::kGpuIdle},
                                         {1.2, true, 1600, true, clock_event::kSwPowerCap},
                                         {1.3, false, 0, true, 0}};
  const ClockWindow w = clock_window(samples);
  EXPECT_EQ(w.samples, 3);
  EXPECT_EQ(w.missing, 1);
  EXPECT_DOUBLE_EQ(*w.mean_mhz, 1700.0);
  EXPECT_DOUBLE_EQ(*w.min_mhz, 1600.0);
  EXPECT_DOUBLE_EQ(*w.max_mhz, 1800.0);
  EXPECT_EQ(w.events, clock_event::kGpuIdle | clock_event::kSwPowerCap);
  EXPECT_FALSE(clock_window({}).mean_mhz.has_value());
}

// On a GPU: the real counters through the monitor while a GEMM runs, as mpsbench uses them.
TEST(GpuMonitor, RealNvmlWhileAKernelRuns) {
  if (!gpu_usable()) GTEST_SKIP() << "no usable CUDA GPU";
  const GpuInfo gpu = open_gpu(0);
  std::string problem;
  auto counters = open_gpu_counters(gpu.uuid, problem);
  if (!counters) GTEST_SKIP() << "NVML not usable here: " << problem;
  std::string note;
  const auto reference = counters->max_sm_clock_mhz(note);
  ASSERT_TRUE(reference.has_value()) << note;
  GpuMonitor monitor(std::move(counters));
  cudaStream_t stream = nullptr;
  MPSB_CUDA(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
  WorkloadArgs args;
  args.device = DeviceKind::gpu;
  args.gpu_ordinal = 0;
  args.stream = stream;
  args.precision = "fp32";
  args.size = 4096;
  auto work = find_kernel("matmul")->make(args);
  work->setup(3);
  work->run();
  work->sync();
  std::string why;
  auto first = monitor.counters().gpm_sample(why);
  const double begin = now_seconds();
  monitor.resume();
  while (now_seconds() - begin < 1.5) {
    for (int i = 0; i < 4; ++i) work->run();
    work->sync();
  }
  const double end = now_seconds();
  monitor.pause();
  auto second = first ? monitor.counters().gpm_sample(why) : nullptr;
  work.reset();  // it uses the stream until it is gone
  MPSB_CUDA(cudaStreamDestroy(stream));
  const auto clocks = clock_window(monitor.clock_samples(begin, end));
  EXPECT_GE(clocks.samples, 20) << "1.5 s of samples";
  ASSERT_TRUE(clocks.mean_mhz.has_value());
  EXPECT_GT(*clocks.mean_mhz, 100.0);
  EXPECT_LE(*clocks.mean_mhz, 1.1 * *reference);
  std::cout << "SM clock " << *clocks.mean_mhz << " MHz of " << *reference << ", " << clocks.samples << " samples\n";
  if (monitor.counters().energy_problem().empty()) {
    const PowerEstimate p = estimate_power(monitor.energy_reads(begin, end), begin, end, begin);
    ASSERT_TRUE(p.available) << p.reason;
    EXPECT_GT(p.mean_power_w, 50.0);
    EXPECT_LT(p.mean_power_w, 1500.0);
    EXPECT_LT(p.uncertainty, 0.05);
    std::cout << "power " << p.mean_power_w << " W +- " << 100 * p.uncertainty << "% over " << p.span_s << " s, "
              << p.ticks << " counter updates\n";
  } else {
    std::cout << "energy counter unavailable: " << monitor.counters().energy_problem() << "\n";
  }
  if (first && second) {
    const GpmFigures f = monitor.counters().gpm_figures(*first, *second, why);
    ASSERT_TRUE(f.sm_active.has_value()) << why;
    EXPECT_GT(*f.sm_active, 50.0) << "a 4096 GEMM keeps the SMs busy";
    EXPECT_LE(*f.sm_active, 100.5);
    std::cout << "GPM: SM active " << *f.sm_active << "%, occupancy " << f.sm_occupancy.value_or(-1) << "%, DRAM "
              << f.dram_bw.value_or(-1) << "%, tensor " << f.tensor_active.value_or(-1) << "%\n";
  } else {
    std::cout << "GPM unavailable: " << why << monitor.counters().gpm_problem() << "\n";
  }
}

}  // namespace
}  // namespace mpsb
