// Clock event naming and the "throttled repetition" classification.
#include <gtest/gtest.h>

#include "measure/throttle.hpp"

namespace mpsb {
namespace {

using Names = std::vector<std::string>;

TEST(ClockEvents, EveryBitHasOneName) {
  const Names known = {"gpu_idle",   "applications_clocks", "sw_power_cap",   "hw_slowdown",  "sync_boost",
                       "sw_thermal", "hw_thermal",          "hw_power_brake", "display_clock"};
  for (int bit = 0; bit < 64; ++bit) {
    const Names names = clock_event_names(std::uint64_t{1} << bit);
    ASSERT_EQ(names.size(), 1u) << bit;
    EXPECT_EQ(names[0], bit < 9 ? known[static_cast<std::size_t>(bit)] : "bit_" + std::to_string(bit)) << bit;
  }
  EXPECT_TRUE(clock_event_names(0).empty());
}

TEST(ClockEvents, SeveralBitsInBitOrder) {
  EXPECT_EQ(clock_event_names(clock_event::kSwPowerCap | clock_event::kGpuIdle | (std::uint64_t{1} << 40)),
            (Names{"gpu_idle", "sw_power_cap", "bit_40"}));
  EXPECT_EQ(clock_event_names(~std::uint64_t{0}).size(), 64u);
}

TEST(ClockEvents, OnlyTheFiveSlowingReasonsCount) {
  const std::uint64_t slowing[] = {clock_event::kSwPowerCap, clock_event::kHwSlowdown, clock_event::kSwThermal,
                                   clock_event::kHwThermal, clock_event::kHwPowerBrake};
  int count = 0;
  for (int bit = 0; bit < 64; ++bit) {
    const std::uint64_t mask = std::uint64_t{1} << bit;
    bool is_slowing = false;
    for (std::uint64_t s : slowing) is_slowing = is_slowing || s == mask;
    EXPECT_EQ(has_slowing_event(mask), is_slowing) << bit;
    count += has_slowing_event(mask) ? 1 : 0;
  }
  EXPECT_EQ(count, 5);
  EXPECT_FALSE(has_slowing_event(clock_event::kGpuIdle | clock_event::kApplicationsClocks |
                                 clock_event::kSyncBoost | clock_event::kDisplayClock));
  EXPECT_TRUE(has_slowing_event(clock_event::kGpuIdle | clock_event::kHwThermal));
}

ClockWindow window(std::optional<double> mean, std::uint64_t events = 0) {
  ClockWindow w;
  w.samples = 10;
  w.mean_mhz = mean;
  w.min_mhz = mean;
  w.max_mhz = mean;
  w.events = events;
  return w;
}

TEST(Affected, ClockBelowTheThresholdOfTheReference) {
  EXPECT_FALSE(repetition_affected(window(1980), 1980.0, 0.9));
  EXPECT_FALSE(repetition_affected(window(1782), 1980.0, 0.9));  // exactly 90 %: not below
  EXPECT_TRUE(repetition_affected(window(1781.9), 1980.0, 0.9));
  EXPECT_TRUE(repetition_affected(window(1000), 1980.0, 0.9));
  EXPECT_FALSE(repetition_affected(window(1000), 1980.0, 0.5));
  EXPECT_TRUE(repetition_affected(window(1979), 1980.0, 1.0));
}

TEST(Affected, SlowingEventsCountWhateverTheClock) {
  for (std::uint64_t e : {clock_event::kSwPowerCap, clock_event::kHwSlowdown, clock_event::kSwThermal,
                          clock_event::kHwThermal, clock_event::kHwPowerBrake}) {
    EXPECT_TRUE(repetition_affected(window(1980, e), 1980.0, 0.9)) << e;
    EXPECT_TRUE(repetition_affected(window(std::nullopt, e), std::nullopt, 0.9)) << e;
  }
  for (std::uint64_t e : {clock_event::kGpuIdle, clock_event::kApplicationsClocks, clock_event::kSyncBoost,
                          clock_event::kDisplayClock}) {
    EXPECT_FALSE(repetition_affected(window(1980, e), 1980.0, 0.9)) << e;
  }
}

TEST(Affected, WithoutAReferenceOrABusySampleOnlyEventsCount) {
  EXPECT_FALSE(repetition_affected(window(100), std::nullopt, 0.9));
  EXPECT_FALSE(repetition_affected(window(100), 0.0, 0.9));
  EXPECT_FALSE(repetition_affected(window(std::nullopt, clock_event::kGpuIdle), 1980.0, 0.9));
  EXPECT_FALSE(repetition_affected(ClockWindow{}, 1980.0, 0.9));
}

}  // namespace
}  // namespace mpsb
