#include "measure/stats.hpp"

#include <algorithm>
#include <cmath>
#include <numeric>
#include <stdexcept>
#include <string>

namespace mpsb::stats {
namespace {
void require_values(const std::vector<double>& values, const char* what) {
  if (values.empty()) throw std::invalid_argument(std::string(what) + " of no values");
}

// Linear interpolation between the closest ranks of already sorted values.
double sorted_percentile(const std::vector<double>& sorted, double q) {
  const double position = q / 100.0 * static_cast<double>(sorted.size() - 1);
  const auto below = static_cast<std::size_t>(std::floor(position));
  const std::size_t above = std::min(below + 1, sorted.size() - 1);
  return sorted[below] + (position - static_cast<double>(below)) * (sorted[above] - sorted[below]);
}
}  // namespace

double median(std::vector<double> values) {
  require_values(values, "median");
  const std::size_t mid = values.size() / 2;
  std::nth_element(values.begin(), values.begin() + static_cast<long>(mid), values.end());
  if (values.size() % 2 == 1) return values[mid];
  const double upper = values[mid];
  const double lower = *std::max_element(values.begin(), values.begin() + static_cast<long>(mid));
  return 0.5 * (lower + upper);
}

double mean(const std::vector<double>& values) {
  require_values(values, "mean");
  return std::accumulate(values.begin(), values.end(), 0.0) / static_cast<double>(values.size());
}

double min(const std::vector<double>& values) {
  require_values(values, "min");
  return *std::min_element(values.begin(), values.end());
}

double max(const std::vector<double>& values) {
  require_values(values, "max");
  return *std::max_element(values.begin(), values.end());
}

namespace {
// Sample (n - 1) standard deviation; needs two values.
double sample_deviation(const std::vector<double>& values) {
  const double m = mean(values);
  double squares = 0;
  for (double v : values) squares += (v - m) * (v - m);
  return std::sqrt(squares / static_cast<double>(values.size() - 1));
}
}  // namespace

double coefficient_of_variation(const std::vector<double>& values) {
  if (values.size() < 2) return 0.0;
  const double m = mean(values);
  return m == 0 ? 0.0 : sample_deviation(values) / std::fabs(m);
}

std::optional<double> relative_median_standard_error(const std::vector<double>& values) {
  if (values.size() < 2) return std::nullopt;
  const double m = median(values);
  if (m == 0) return std::nullopt;
  constexpr double kMedianEfficiency = 1.2533141373155003;  // sqrt(pi / 2)
  return kMedianEfficiency * sample_deviation(values) / (std::sqrt(static_cast<double>(values.size())) * std::fabs(m));
}

double jain_fairness(const std::vector<double>& values) {
  require_values(values, "jain_fairness");
  double sum = 0, squares = 0;
  for (double v : values) {
    sum += v;
    squares += v * v;
  }
  if (squares == 0) return 1.0;  // nobody got anything: equally (un)served
  return sum * sum / (static_cast<double>(values.size()) * squares);
}

double percentile(std::vector<double> values, double q) {
  require_values(values, "percentile");
  if (!(q >= 0 && q <= 100)) throw std::invalid_argument("percentile " + std::to_string(q) + " outside [0, 100]");
  std::sort(values.begin(), values.end());
  return sorted_percentile(values, q);
}

LatencyStats latency_stats(const std::vector<double>& seconds) {
  require_values(seconds, "latency");
  std::vector<double> sorted = seconds;
  std::sort(sorted.begin(), sorted.end());
  auto at = [&](double q) { return sorted_percentile(sorted, q); };
  LatencyStats s;
  s.count = static_cast<std::int64_t>(sorted.size());
  s.mean = mean(sorted);
  s.p50 = at(50);
  s.p95 = at(95);
  s.p99 = at(99);
  s.max = sorted.back();
  return s;
}

}  // namespace mpsb::stats
