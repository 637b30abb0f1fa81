#include <gtest/gtest.h>

#include <cmath>
#include <random>
#include <stdexcept>

#include "stats.hpp"

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

}  // namespace
}  // namespace mpsb::stats
