#include "stats.hpp"

#include <algorithm>
#include <cmath>
#include <numeric>
#include <stdexcept>

namespace mpsb::stats {
namespace {
void require_values(const std::vector<double>& values, const char* what) {
  if (values.empty()) throw std::invalid_argument(std::string(what) + " of no values");
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

double coefficient_of_variation(const std::vector<double>& values) {
  if (values.size() < 2) return 0.0;
  const double m = mean(values);
  double squares = 0;
  for (double v : values) squares += (v - m) * (v - m);
  const double sd = std::sqrt(squares / static_cast<double>(values.size() - 1));
  return m == 0 ? 0.0 : sd / std::fabs(m);
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

}  // namespace mpsb::stats
