#include <gtest/gtest.h>

#include <cmath>
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

}  // namespace
}  // namespace mpsb::stats
