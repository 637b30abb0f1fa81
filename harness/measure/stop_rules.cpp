#include "measure/stop_rules.hpp"

#include <algorithm>
#include <cmath>

#include "measure/stats.hpp"

namespace mpsb {

WarmupRule warmup_rule(double warmup_time_s) {
  return WarmupRule{warmup_time_s, kWarmupTolerance, kWarmupCapFactor * warmup_time_s};
}

WarmupVerdict warmup_verdict(double elapsed_s, const std::vector<double>& per_iteration_s, const WarmupRule& rule) {
  // Two batches at the calibrated count are the least that can show a trend.
  if (per_iteration_s.size() < 2) return WarmupVerdict::keep_warming;
  const double last = per_iteration_s.back();
  const double previous = per_iteration_s[per_iteration_s.size() - 2];
  const bool agree = std::fabs(last - previous) <= rule.tolerance * std::max(last, previous);
  if (agree && elapsed_s >= rule.min_time_s) return WarmupVerdict::stable;
  if (elapsed_s >= rule.cap_s) return WarmupVerdict::gave_up;
  return WarmupVerdict::keep_warming;
}

std::optional<double> window_noise(const std::vector<double>& windows_s) {
  std::vector<double> rates;
  rates.reserve(windows_s.size());
  for (double w : windows_s) rates.push_back(w > 0 ? 1.0 / w : 0.0);
  return stats::relative_median_standard_error(rates);
}

RepetitionVerdict repetition_verdict(const std::vector<double>& kept_windows_s, double elapsed_s,
                                     const RepetitionRule& rule) {
  const int kept = static_cast<int>(kept_windows_s.size());
  if (kept < rule.min_repetitions) return RepetitionVerdict::repeat;
  if (!rule.max_noise) return RepetitionVerdict::stop_count;
  const std::optional<double> noise = window_noise(kept_windows_s);
  if (noise && *noise <= *rule.max_noise) return RepetitionVerdict::stop_noise;
  if (kept >= std::max(rule.max_repetitions, rule.min_repetitions)) return RepetitionVerdict::stop_cap;
  // Start no repetition that would end past the budget: the next window is
  // expected to last about as long as the median one so far.
  if (elapsed_s + stats::median(kept_windows_s) > rule.max_time_s) return RepetitionVerdict::stop_time;
  return RepetitionVerdict::repeat;
}

bool discard_repetition(bool affected, bool discard_throttled, int discarded_so_far, int retries) {
  return affected && discard_throttled && discarded_so_far < retries;
}

DroppedBy drop_repetition(bool throttled, bool cpu_slowed, const DropRules& rules, int throttle_dropped,
                          int cpu_dropped) {
  DroppedBy by;
  by.throttle = discard_repetition(throttled, rules.discard_throttled, throttle_dropped, rules.throttle_retries);
  by.cpu = discard_repetition(cpu_slowed, rules.discard_cpu_slowed, cpu_dropped, rules.cpu_retries);
  return by;
}

}  // namespace mpsb
