// Summary statistics of timing samples.
#pragma once

#include <vector>

namespace mpsb::stats {

double median(std::vector<double> values);        // mean of the middle two for even counts
double mean(const std::vector<double>& values);
double min(const std::vector<double>& values);
double max(const std::vector<double>& values);
// Sample standard deviation / mean; 0 for fewer than two values.
double coefficient_of_variation(const std::vector<double>& values);
// Jain's fairness index (sum x)^2 / (n sum x^2): 1 when all equal, 1/n when one gets everything.
double jain_fairness(const std::vector<double>& values);

}  // namespace mpsb::stats
