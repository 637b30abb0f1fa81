// The options of the measurement protocol: warm-up, adaptive repetitions,
// throttle and CPU-slowdown handling; their defaults and their one-line refusals.
#include <gtest/gtest.h>

#include "cli/options.hpp"
#include "usage_error_text.hpp"

namespace mpsb {
namespace {

Options parse(std::vector<std::string> args) { return parse_options(args); }

std::string error_of(const std::vector<std::string>& args) {
  return usage_error_text([&] { parse_options(args); });
}

TEST(MeasureOptions, Defaults) {
  const Options o = parse({});
  EXPECT_DOUBLE_EQ(o.measure.warmup_time_s, 0.2);
  EXPECT_FALSE(o.measure.max_noise.has_value());
  EXPECT_FALSE(o.measure.max_time_s.has_value());
  EXPECT_FALSE(o.measure.discard_throttled);
  EXPECT_EQ(o.measure.throttle_retries, 3);
  EXPECT_DOUBLE_EQ(o.measure.clock_threshold, 0.9);
  EXPECT_DOUBLE_EQ(o.measure.cpu_threshold, 0.3);
  EXPECT_FALSE(o.measure.discard_cpu_slowed);
  EXPECT_EQ(o.measure.cpu_retries, 3);
  EXPECT_EQ(o.measure.repetitions, 5);
  EXPECT_DOUBLE_EQ(o.measure.min_time_s, 0.25);
}

TEST(MeasureOptions, MaxNoiseTakesPercentInEveryForm) {
  EXPECT_DOUBLE_EQ(*parse({"--max-noise", "1"}).measure.max_noise, 0.01);
  EXPECT_DOUBLE_EQ(*parse({"--max-noise", "1%"}).measure.max_noise, 0.01);
  EXPECT_DOUBLE_EQ(*parse({"--max-noise=0.5"}).measure.max_noise, 0.005);
  EXPECT_DOUBLE_EQ(*parse({"--max-noise", "99.9%"}).measure.max_noise, 0.999);
  EXPECT_DOUBLE_EQ(*parse({"--max-noise", "1e-4"}).measure.max_noise, 1e-6);
}

TEST(MeasureOptions, MaxNoiseSetsTheDefaultBudgetAndMakesRepetitionsTheMinimum) {
  const Options o = parse({"--max-noise", "1", "--repetitions", "3"});
  EXPECT_EQ(o.measure.repetitions, 3);
  ASSERT_TRUE(o.measure.max_time_s.has_value());
  EXPECT_DOUBLE_EQ(*o.measure.max_time_s, 10.0);
  EXPECT_DOUBLE_EQ(*parse({"--max-time", "3", "--max-noise", "1"}).measure.max_time_s, 3.0);
}

TEST(MeasureOptions, OtherFlags) {
  const Options o = parse({"--warmup-time", "0", "--discard-throttled", "--throttle-retries", "5",
                           "--clock-threshold", "75%"});
  EXPECT_DOUBLE_EQ(o.measure.warmup_time_s, 0.0);
  EXPECT_TRUE(o.measure.discard_throttled);
  EXPECT_EQ(o.measure.throttle_retries, 5);
  EXPECT_DOUBLE_EQ(o.measure.clock_threshold, 0.75);
  EXPECT_DOUBLE_EQ(parse({"--clock-threshold", "100"}).measure.clock_threshold, 1.0);
  EXPECT_EQ(parse({"--discard-throttled", "--throttle-retries", "0"}).measure.throttle_retries, 0);
}

TEST(MeasureOptions, CpuSlowdownFlags) {
  const Options o = parse({"--cpu-threshold", "50%", "--discard-cpu-slowed", "--cpu-retries", "7"});
  EXPECT_DOUBLE_EQ(o.measure.cpu_threshold, 0.5);
  EXPECT_TRUE(o.measure.discard_cpu_slowed);
  EXPECT_EQ(o.measure.cpu_retries, 7);
  EXPECT_FALSE(o.measure.discard_throttled);  // the two rules are independent
  EXPECT_DOUBLE_EQ(parse({"--cpu-threshold", "1000"}).measure.cpu_threshold, 10.0);  // 11x its fastest
  EXPECT_DOUBLE_EQ(parse({"--cpu-threshold=0.5"}).measure.cpu_threshold, 0.005);
  EXPECT_EQ(parse({"--discard-cpu-slowed", "--cpu-retries", "0"}).measure.cpu_retries, 0);
}

TEST(MeasureOptions, RefusalsNameTheValueInOneLine) {
  const std::vector<std::pair<std::vector<std::string>, std::string>> cases = {
      {{"--max-noise", "0"}, "--max-noise: 0 must be in (0, 100) percent"},
      {{"--max-noise", "0%"}, "--max-noise: 0% must be in (0, 100) percent"},
      {{"--max-noise", "-1"}, "--max-noise: -1 must be in (0, 100) percent"},
      {{"--max-noise", "100"}, "--max-noise: 100 must be in (0, 100) percent"},
      {{"--max-noise", "250%"}, "--max-noise: 250% must be in (0, 100) percent"},
      {{"--max-noise", "abc"}, "--max-noise: 'abc' is not a percentage"},
      {{"--max-noise", "1%%"}, "--max-noise: '1%%' is not a percentage"},
      {{"--max-noise", "%"}, "--max-noise: '%' is not a percentage"},
      {{"--max-noise", "nan"}, "--max-noise: 'nan' is not a percentage"},
      {{"--max-noise"}, "--max-noise: missing value"},
      {{"--max-noise", "1", "--repetitions", "2"},
       "--repetitions: 2 is too few with --max-noise, which makes it the minimum (at least 3)"},
      {{"--repetitions", "1", "--max-noise", "1"},
       "--repetitions: 1 is too few with --max-noise, which makes it the minimum (at least 3)"},
      {{"--max-time", "3"}, "--max-time: needs --max-noise (without it --repetitions is a fixed count)"},
      {{"--max-noise", "1", "--max-time", "0"}, "--max-time: 0 must be in (0, 3600] seconds"},
      {{"--max-noise", "1", "--max-time", "x"}, "--max-time: 'x' is not a number of seconds"},
      {{"--warmup-time", "-1"}, "--warmup-time: -1 must be in [0, 60] seconds"},
      {{"--warmup-time", "61"}, "--warmup-time: 61 must be in [0, 60] seconds"},
      {{"--warmup-time", " 1"}, "--warmup-time: ' 1' is not a number of seconds"},
      {{"--clock-threshold", "0"}, "--clock-threshold: 0 must be in (0, 100] percent"},
      {{"--clock-threshold", "101"}, "--clock-threshold: 101 must be in (0, 100] percent"},
      {{"--throttle-retries", "2"}, "--throttle-retries: needs --discard-throttled (nothing is retaken without it)"},
      {{"--discard-throttled", "--throttle-retries", "-1"}, "--throttle-retries: -1 is out of range [0, 100]"},
      {{"--discard-throttled=yes"}, "--discard-throttled: takes no value (got 'yes')"},
      {{"--cpu-threshold", "0"}, "--cpu-threshold: 0 must be in (0, 1000] percent"},
      {{"--cpu-threshold", "-5%"}, "--cpu-threshold: -5% must be in (0, 1000] percent"},
      {{"--cpu-threshold", "1001"}, "--cpu-threshold: 1001 must be in (0, 1000] percent"},
      {{"--cpu-threshold", "fast"}, "--cpu-threshold: 'fast' is not a percentage"},
      {{"--cpu-retries", "2"}, "--cpu-retries: needs --discard-cpu-slowed (nothing is retaken without it)"},
      {{"--discard-cpu-slowed", "--cpu-retries", "101"}, "--cpu-retries: 101 is out of range [0, 100]"},
      {{"--discard-cpu-slowed=1"}, "--discard-cpu-slowed: takes no value (got '1')"},
  };
  for (const auto& [args, message] : cases) {
    const std::string got = error_of(args);
    EXPECT_EQ(got, message);
    EXPECT_EQ(got.find('\n'), std::string::npos) << got;
  }
}

TEST(MeasureOptions, UsageMentionsEveryNewFlag) {
  const std::string usage = usage_text();
  for (const char* flag : {"--warmup-time", "--max-noise", "--max-time", "--discard-throttled", "--throttle-retries",
                           "--clock-threshold", "--cpu-threshold", "--discard-cpu-slowed", "--cpu-retries"}) {
    EXPECT_NE(usage.find(flag), std::string::npos) << flag;
  }
}

}  // namespace
}  // namespace mpsb
