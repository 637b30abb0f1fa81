#include <gtest/gtest.h>

#include <cmath>
#include <random>
#include <stdexcept>

#include "measure/stats.hpp"

namespace mpsb::stats {
namespace {

TEST(Stats, MedianOddAndEven) {
  EXPECT_DOUBLE_EQ(median({3, 1, 2}), 2);
  EXPECT_DOUBLE_EQ(median({4, 1, 3, 2}), 2.5);
  EXPECT_DOUBLE_EQ(median({7}), 7);
  EXPECT_DOUBLE_EQ(median({5, 5, 1, 9, 9}), 5);
}

TEST(Stats, MinMaxMean) {
  EXPECT_DOUBLE_EQ(min({3, -1, 2}), -1);
  EXPECT_DOUBLE_EQ(max({3, -1, 2}), 3);
  EXPECT_DOUBLE_EQ(mean({1, 2, 3, 6}), 3);
}

TEST(Stats, EmptyInputIsAnError) {
  EXPECT_THROW(median({}), std::invalid_argument);
  EXPECT_THROW(jain_fairness({}), std::invalid_argument);
}

TEST(Stats, CoefficientOfVariationUsesSampleDeviation) {
  // mean 5, sample variance ((−3)^2 + (−1)^2 + 1^2 + 3^2) / 3 = 20/3
  EXPECT_NEAR(coefficient_of_variation({2, 4, 6, 8}), std::sqrt(20.0 / 3.0) / 5.0, 1e-12);
  EXPECT_DOUBLE_EQ(coefficient_of_variation({4, 4, 4}), 0);
  EXPECT_DOUBLE_EQ(coefficient_of_variation({4}), 0);
}

TEST(Stats, JainFairness) {
  EXPECT_DOUBLE_EQ(jain_fairness({1, 1, 1, 1}), 1.0);
  EXPECT_DOUBLE_EQ(jain_fairness({1, 0, 0, 0}), 0.25);
  // (1 + 2)^2 / (2 * (1 + 4)) = 0.9
  EXPECT_DOUBLE_EQ(jain_fairness({1, 2}), 0.9);
  EXPECT_DOUBLE_EQ(jain_fairness({5}), 1.0);
}

TEST(Stats, RelativeMedianStandardErrorFormula) {
  // sd 1, median 10, n 3: 1.2533 * 1 / (sqrt(3) * 10)
  EXPECT_NEAR(*relative_median_standard_error({9, 10, 11}), 1.2533141373155003 / (std::sqrt(3.0) * 10), 1e-15);
  EXPECT_DOUBLE_EQ(*relative_median_standard_error({4, 4, 4, 4}), 0);
  EXPECT_FALSE(relative_median_standard_error({}).has_value());
  EXPECT_FALSE(relative_median_standard_error({5}).has_value());
  EXPECT_FALSE(relative_median_standard_error({-1, 0, 1}).has_value());  // median 0
  // Relative: scaling the samples changes nothing.
  EXPECT_NEAR(*relative_median_standard_error({1, 2, 4, 8}), *relative_median_standard_error({3, 6, 12, 24}), 1e-15);
  // More samples of the same spread: smaller by sqrt(n).
  const double three = *relative_median_standard_error({9, 11, 10});
  const double twelve = *relative_median_standard_error({9, 11, 10, 9, 11, 10, 9, 11, 10, 9, 11, 10});
  EXPECT_LT(twelve, three);
  EXPECT_STREQ(kNoiseEstimator, "median_se_normal");
}

// The constant is right: for normal samples the estimate matches the spread
// of the sample median over many draws.
TEST(Stats, RelativeMedianStandardErrorMatchesTheMediansSpread) {
  std::mt19937_64 random(12345);
  std::normal_distribution<double> normal(100.0, 2.0);
  for (int n : {9, 25, 51}) {
    std::vector<double> medians;
    double estimate_sum = 0;
    const int trials = 4000;
    for (int t = 0; t < trials; ++t) {
      std::vector<double> sample;
      for (int i = 0; i < n; ++i) sample.push_back(normal(random));
      medians.push_back(median(sample));
      estimate_sum += *relative_median_standard_error(sample);
    }
    const double actual = coefficient_of_variation(medians);
    const double estimated = estimate_sum / trials;
    EXPECT_NEAR(estimated / actual, 1.0, 0.12) << "n " << n << ": estimated " << estimated << ", actual " << actual;
  }
}


// Percentiles: linear interpolation between the closest ranks (numpy.percentile's
// default): position q/100 * (n - 1) in the sorted values.
TEST(Stats, PercentileInterpolatesLinearlyBetweenClosestRanks) {
  const std::vector<double> four{1, 2, 3, 4};
  EXPECT_DOUBLE_EQ(percentile(four, 50), 2.5);   // position 1.5
  EXPECT_DOUBLE_EQ(percentile(four, 95), 3.85);  // position 2.85
  EXPECT_DOUBLE_EQ(percentile(four, 99), 3.97);  // position 2.97
  EXPECT_DOUBLE_EQ(percentile(four, 0), 1);
  EXPECT_DOUBLE_EQ(percentile(four, 100), 4);
  EXPECT_DOUBLE_EQ(percentile(four, 25), 1.75);  // position 0.75
  // Exactly on a rank: that value, no interpolation.
  EXPECT_DOUBLE_EQ(percentile({10, 20, 30, 40, 50}, 50), 30);
  EXPECT_DOUBLE_EQ(percentile({10, 20, 30, 40, 50}, 75), 40);
  // numpy.percentile([0, 10], 99) == 9.9
  EXPECT_DOUBLE_EQ(percentile({0, 10}, 99), 9.9);
}

TEST(Stats, PercentileOfOneValueIsThatValue) {
  for (double q : {0.0, 50.0, 95.0, 99.0, 100.0}) EXPECT_DOUBLE_EQ(percentile({0.125}, q), 0.125) << q;
}

TEST(Stats, PercentileSortsItsInput) {
  EXPECT_DOUBLE_EQ(percentile({4, 1, 3, 2}, 50), 2.5);
  EXPECT_DOUBLE_EQ(percentile({4, 1, 3, 2}, 95), 3.85);
  EXPECT_DOUBLE_EQ(percentile({3, 4, 2, 1}, 99), 3.97);
  // numpy.percentile([9, 1, 5, 7, 3, 100], 90) == 54.5 (position 4.5, between 9 and 100)
  EXPECT_DOUBLE_EQ(percentile({9, 1, 5, 7, 3, 100}, 90), 54.5);
  // Repeated values.
  EXPECT_DOUBLE_EQ(percentile({2, 2, 2, 8}, 50), 2);
  EXPECT_DOUBLE_EQ(percentile({2, 2, 2, 8}, 99), 2 + 0.97 * 6);
}

TEST(Stats, PercentileOfNoValuesThrows) { EXPECT_THROW(percentile({}, 50), std::invalid_argument); }

TEST(Stats, LatencyStatsMatchHandComputedValues) {
  const LatencyStats s = latency_stats({0.004, 0.001, 0.003, 0.002});
  EXPECT_EQ(s.count, 4);
  EXPECT_DOUBLE_EQ(s.mean, 0.0025);
  EXPECT_DOUBLE_EQ(s.p50, 0.0025);
  EXPECT_DOUBLE_EQ(s.p95, 0.00385);
  EXPECT_DOUBLE_EQ(s.p99, 0.00397);
  EXPECT_DOUBLE_EQ(s.max, 0.004);
  const LatencyStats one = latency_stats({0.5});
  EXPECT_EQ(one.count, 1);
  EXPECT_DOUBLE_EQ(one.mean, 0.5);
  EXPECT_DOUBLE_EQ(one.p50, 0.5);
  EXPECT_DOUBLE_EQ(one.p99, 0.5);
  EXPECT_DOUBLE_EQ(one.max, 0.5);
  EXPECT_THROW(latency_stats({}), std::invalid_argument);
}

// The latency figures agree with percentile() and are ordered on any input.
TEST(Stats, LatencyStatsAreOrderedAndAgreeWithPercentile) {
  std::mt19937_64 random(7);
  std::lognormal_distribution<double> skewed(-7.0, 1.0);
  for (int n : {1, 2, 3, 10, 101, 1000}) {
    std::vector<double> values;
    for (int i = 0; i < n; ++i) values.push_back(skewed(random));
    const LatencyStats s = latency_stats(values);
    EXPECT_EQ(s.count, n);
    EXPECT_DOUBLE_EQ(s.p50, percentile(values, 50));
    EXPECT_DOUBLE_EQ(s.p95, percentile(values, 95));
    EXPECT_DOUBLE_EQ(s.p99, percentile(values, 99));
    EXPECT_DOUBLE_EQ(s.p50, median(values));
    EXPECT_DOUBLE_EQ(s.max, max(values));
    EXPECT_LE(min(values), s.p50);
    EXPECT_LE(s.p50, s.p95);
    EXPECT_LE(s.p95, s.p99);
    EXPECT_LE(s.p99, s.max);
    EXPECT_NEAR(s.mean, mean(values), 1e-15);
  }
}

}  // namespace
}  // namespace mpsb::stats
