// The host-CPU watch of every timed thread (harness/measure/cpu_*.hpp): the
// /proc parsers, the loss between two snapshots, the probe itself and the
// watch's reference and ratio; the "CPU-slowed" rule.
#include <gtest/gtest.h>

#include <cmath>
#include <string>

#include "measure/cpu_counters.hpp"
#include "measure/cpu_probe.hpp"
#include "measure/cpu_watch.hpp"

namespace mpsb {
namespace {

// A /proc/stat as a KVM guest's kernel writes it (5.x: ten columns); cpu1 with a large steal.
const char* const kProcStat =
    "cpu  184801 0 18378 413167 1068 0 154 9267 0 0\n"
    "cpu0 84867 0 8233 215487 148 0 19 134 0 0\n"
    "cpu1 99934 0 10144 197680 920 0 135 9133 0 0\n"
    "cpu12 1 2 3 4 5 6 7 8\n"
    "intr 1234 0 0\n"
    "ctxt 99\n"
    "cpu3 1 2 3\n"          // too short: no steal column
    "cpu4 1 2 3 4 5 6 x 8\n"  // malformed before the steal column
    "cpux 1 2 3 4 5 6 7 8\n"
    "softirq 1 2 3\n";

TEST(ProcStat, StealColumnOfEveryCpuLine) {
  const auto steal = steal_ticks_by_cpu(kProcStat);
  ASSERT_EQ(steal.size(), 3u);
  EXPECT_EQ(steal.at(0), 134u);
  EXPECT_EQ(steal.at(1), 9133u);
  EXPECT_EQ(steal.at(12), 8u);  // eight columns (older kernels) are enough
  EXPECT_EQ(steal.count(3), 0u);
  EXPECT_EQ(steal.count(4), 0u);
  EXPECT_TRUE(steal_ticks_by_cpu("").empty());
  EXPECT_TRUE(steal_ticks_by_cpu("cpu  1 2 3 4 5 6 7 8\n").empty());  // the total is not a CPU
}

TEST(Schedstat, SecondFieldIsTheRunDelay) {
  EXPECT_EQ(run_delay_ns("0 3369400 1\n"), std::optional<std::uint64_t>(3369400));
  EXPECT_EQ(run_delay_ns("123456789012 42 7"), std::optional<std::uint64_t>(42));
  EXPECT_EQ(run_delay_ns(""), std::nullopt);
  EXPECT_EQ(run_delay_ns("12 34"), std::nullopt);  // not the three fields of schedstat
  EXPECT_EQ(run_delay_ns("12 -3 4"), std::nullopt);
  EXPECT_EQ(run_delay_ns("a 3 4"), std::nullopt);
}

CpuCounterSnapshot snapshot(int cpu, std::map<int, std::uint64_t> steal, std::optional<std::uint64_t> delay) {
  CpuCounterSnapshot s;
  s.cpu = cpu;
  s.steal_ticks = std::move(steal);
  s.run_delay_ns = delay;
  return s;
}

TEST(CpuLoss, StealOfTheCpuItRanOnAndItsRunDelay) {
  const auto loss = cpu_loss_between(snapshot(1, {{0, 10}, {1, 100}}, 1000),
                                     snapshot(1, {{0, 50}, {1, 103}}, 2501000), 100);
  ASSERT_TRUE(loss.steal_s && loss.run_delay_s);
  EXPECT_DOUBLE_EQ(*loss.steal_s, 0.03);  // 3 ticks of 10 ms on cpu1; cpu0's 40 are another CPU's
  EXPECT_DOUBLE_EQ(*loss.run_delay_s, 0.0025);
  EXPECT_EQ(loss.problem, "");
}

TEST(CpuLoss, AThreadThatMovedGetsTheLargerOfItsTwoCpus) {
  const auto moved = cpu_loss_between(snapshot(0, {{0, 10}, {1, 100}}, 0), snapshot(1, {{0, 12}, {1, 107}}, 0), 100);
  ASSERT_TRUE(moved.steal_s);
  EXPECT_DOUBLE_EQ(*moved.steal_s, 0.07);
}

TEST(CpuLoss, UnreadableCountersGiveNoFigureAndAReason) {
  CpuCounterSnapshot unreadable = snapshot(0, {}, std::nullopt);
  unreadable.problem = "cannot read /nowhere/stat";
  const auto a = cpu_loss_between(unreadable, snapshot(0, {{0, 5}}, 9), 100);
  EXPECT_FALSE(a.steal_s);
  EXPECT_FALSE(a.run_delay_s);
  EXPECT_EQ(a.problem, "cannot read /nowhere/stat");
  const auto missing_cpu = cpu_loss_between(snapshot(3, {{0, 5}}, 1), snapshot(3, {{0, 6}}, 2), 100);
  EXPECT_FALSE(missing_cpu.steal_s);
  EXPECT_EQ(missing_cpu.problem, "no steal column for cpu3");
  ASSERT_TRUE(missing_cpu.run_delay_s);
  const auto no_cpu = cpu_loss_between(snapshot(-1, {{0, 5}}, 1), snapshot(0, {{0, 6}}, 2), 100);
  EXPECT_FALSE(no_cpu.steal_s);
  const auto no_tick = cpu_loss_between(snapshot(0, {{0, 5}}, 1), snapshot(0, {{0, 6}}, 2), -1);
  EXPECT_FALSE(no_tick.steal_s);
  EXPECT_NE(no_tick.problem.find("_SC_CLK_TCK"), std::string::npos);
}

TEST(CpuCounters, ThisThreadsOwnAreReadable) {
  const CpuCounterSnapshot s = read_cpu_counters("/proc");
  EXPECT_GE(s.cpu, 0);
  EXPECT_EQ(s.steal_ticks.count(s.cpu), 1u) << s.problem;
  EXPECT_TRUE(s.run_delay_ns.has_value()) << s.problem;
  const CpuCounterSnapshot none = read_cpu_counters("/nonexistent-proc");
  EXPECT_TRUE(none.steal_ticks.empty());
  EXPECT_FALSE(none.run_delay_ns);
  EXPECT_EQ(none.problem, "cannot read /nonexistent-proc/stat; cannot read /nonexistent-proc/thread-self/schedstat");
}

TEST(CpuProbe, PositiveRepeatableAndDoesTheWork) {
  CpuProbe probe;
  const double before = probe.checksum();
  double fastest = probe.seconds(), slowest = fastest;
  for (int i = 0; i < 30; ++i) {
    const double s = probe.seconds();
    fastest = std::min(fastest, s);
    slowest = std::max(slowest, s);
  }
  EXPECT_GT(fastest, 0.0);
  EXPECT_LT(fastest, 1e-3);  // microseconds on any current core, far below a repetition
  // The minimum of three runs: within a factor of the fastest even on a shared CI core, most of the time.
  int within = 0;
  for (int i = 0; i < 30; ++i) within += probe.seconds() < 4 * fastest ? 1 : 0;
  EXPECT_GE(within, 20) << "fastest " << fastest << " s, slowest " << slowest << " s";
  const double after = probe.checksum();
  EXPECT_NE(before, after);  // the sweeps really ran
  EXPECT_TRUE(std::isfinite(after));
  EXPECT_GE(after, 0.0);
  EXPECT_LE(after, CpuProbe::kCells);
  EXPECT_EQ(cpu_probe_name(), "relax_sweep_2048x8");
}

TEST(CpuWatch, RatioAgainstTheFastestProbeSoFar) {
  CpuWatch watch("/proc");
  EXPECT_FALSE(watch.reference_s());
  double reference = 0;
  for (int rep = 0; rep < 10; ++rep) {
    watch.before(1);
    const CpuReading r = watch.after();
    ASSERT_TRUE(watch.reference_s());
    EXPECT_GE(r.ratio, 1.0);  // the reference includes this repetition's probes
    if (rep > 0) {
      EXPECT_LE(*watch.reference_s(), reference);  // it only ever gets faster
    }
    reference = *watch.reference_s();
    EXPECT_TRUE(r.steal_s.has_value()) << watch.note();
    EXPECT_TRUE(r.run_delay_s.has_value()) << watch.note();
    EXPECT_GE(*r.steal_s, 0.0);
    EXPECT_GE(*r.run_delay_s, 0.0);
  }
  EXPECT_EQ(watch.note(), "");
}

TEST(CpuWatch, OneReferencePerLoad) {
  CpuWatch watch("/proc");
  watch.before(1);
  watch.after();
  const double at_one = *watch.reference_s();
  watch.before(8);  // another load: its own calibration, not the other's reference
  watch.after();
  const double at_eight = *watch.reference_s();
  watch.before(1);
  watch.after();
  EXPECT_LE(*watch.reference_s(), at_one);  // back at 1: that load's reference, only ever faster
  EXPECT_GT(at_eight, 0.0);
}

TEST(CpuWatch, UnreadableCountersAreNoted) {
  CpuWatch watch("/nonexistent-proc");
  for (int rep = 0; rep < 3; ++rep) {
    watch.before(1);
    const CpuReading r = watch.after();
    EXPECT_FALSE(r.steal_s);
    EXPECT_FALSE(r.run_delay_s);
    EXPECT_GE(r.ratio, 1.0);  // the probe does not need /proc
  }
  // Said once, not once per repetition.
  EXPECT_EQ(watch.note(), "cannot read /nonexistent-proc/stat; cannot read /nonexistent-proc/thread-self/schedstat");
}

TEST(CpuSlowedRule, AboveOnePlusTheThreshold) {
  EXPECT_FALSE(cpu_slowed(1.0, 0.3));
  EXPECT_FALSE(cpu_slowed(1.3, 0.3));  // at the threshold: not slowed
  EXPECT_TRUE(cpu_slowed(1.31, 0.3));
  EXPECT_TRUE(cpu_slowed(2.5, 1.0));
  for (double threshold : {0.05, 0.3, 2.0, 10.0}) {
    EXPECT_TRUE(cpu_slowed(injected_probe_ratio(threshold), threshold)) << threshold;
  }
}

TEST(CpuWatches, KeptAcrossConfigurations) {
  CpuWatches watches;
  watches.prepare(2);
  CpuWatch* first = &watches.of(0);
  first->before(1);
  first->after();
  const auto reference = first->reference_s();
  watches.prepare(4);  // a later configuration with more instances keeps the earlier watches
  EXPECT_EQ(&watches.of(0), first);
  EXPECT_EQ(watches.of(0).reference_s(), reference);
  EXPECT_FALSE(watches.of(3).reference_s());
  watches.prepare(1);
  EXPECT_EQ(&watches.of(0), first);
}

}  // namespace
}  // namespace mpsb
