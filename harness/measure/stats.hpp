// Summary statistics of timing samples.
#pragma once

#include <cstdint>
#include <optional>
#include <vector>

namespace mpsb::stats {

// The name results give the noise estimator below ("noise.estimator").
inline constexpr const char* kNoiseEstimator = "median_se_normal";

double median(std::vector<double> values);        // mean of the middle two for even counts
double mean(const std::vector<double>& values);
double min(const std::vector<double>& values);
double max(const std::vector<double>& values);
// Sample standard deviation / mean; 0 for fewer than two values.
double coefficient_of_variation(const std::vector<double>& values);
// Jain's fairness index (sum x)^2 / (n sum x^2): 1 when all equal, 1/n when one gets everything.
double jain_fairness(const std::vector<double>& values);
// Relative standard error of the median: 1.2533 * s / (sqrt(n) * median),
// s the sample standard deviation. sqrt(pi/2) = 1.2533 is the asymptotic
// ratio of the median's standard error to the mean's for normal samples; the
// sample deviation (not a robust spread) makes one outlier raise the estimate,
// so a noisy series is never called quiet. nullopt for fewer than two values
// or a median of 0.
std::optional<double> relative_median_standard_error(const std::vector<double>& values);

// The q-th percentile (0 <= q <= 100) with linear interpolation between the
// closest ranks of the sorted values (numpy.percentile's default): position
// q/100 * (n - 1). Throws on no values.
double percentile(std::vector<double> values, double q);

// The latency figures of a set of requests.
struct LatencyStats {
  std::int64_t count = 0;
  double mean = 0, p50 = 0, p95 = 0, p99 = 0, max = 0;
};
LatencyStats latency_stats(const std::vector<double>& seconds);  // throws on no values

}  // namespace mpsb::stats
