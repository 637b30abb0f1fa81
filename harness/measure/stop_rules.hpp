// When the loops of timed windows stop (README "Measurement protocol"): the
// warm-up, the repetitions and the retaking of throttled and CPU-slowed
// repetitions. Pure functions of values every active rank and thread holds
// identically (windows reduced over the active ranks), so all reach the same
// verdict without a broadcast.
#pragma once

#include <optional>
#include <vector>

namespace mpsb {

// Warm-up: synchronized batches at the calibrated count until at least
// min_time_s has passed (calibration included) and the per-iteration time of
// the last two batches agrees within `tolerance`; after cap_s it gives up.
struct WarmupRule {
  double min_time_s = 0.2;
  double tolerance = 0.02;
  double cap_s = 2.0;
};

inline constexpr double kWarmupTolerance = 0.02;
inline constexpr double kWarmupCapFactor = 10.0;
// The rule for --warmup-time: cap = kWarmupCapFactor x the time.
WarmupRule warmup_rule(double warmup_time_s);

enum class WarmupVerdict { keep_warming, stable, gave_up };

// `elapsed_s`: sum of every batch's window so far (calibration included);
// `per_iteration_s`: window / count of each batch at the calibrated count, in
// order (the last calibration batch first). Fewer than two: keep warming.
WarmupVerdict warmup_verdict(double elapsed_s, const std::vector<double>& per_iteration_s, const WarmupRule& rule);

// Repetitions. Without max_noise exactly min_repetitions are kept. With it,
// min_repetitions is the minimum and repetitions go on until the noise
// estimate of the kept ones is at most max_noise, the next repetition would
// end past max_time_s, or max_repetitions are kept.
struct RepetitionRule {
  int min_repetitions = 5;
  std::optional<double> max_noise;  // fraction; nullopt: fixed count
  double max_time_s = 10;
  int max_repetitions = 100;
};

inline constexpr int kMaxAdaptiveRepetitions = 100;
inline constexpr double kDefaultMaxTimeS = 10;

enum class RepetitionVerdict { repeat, stop_count, stop_noise, stop_time, stop_cap };

// `kept_windows_s`: the windows of the kept repetitions (the noise estimate
// is taken over their rates 1 / window, proportional to the aggregate
// throughput); `elapsed_s`: from the first repetition's start to the last
// one's end, discarded repetitions included.
RepetitionVerdict repetition_verdict(const std::vector<double>& kept_windows_s, double elapsed_s,
                                     const RepetitionRule& rule);

// The noise estimate of a series of windows (stats::relative_median_standard_error
// of their rates), nullopt below two.
std::optional<double> window_noise(const std::vector<double>& windows_s);

// --discard-throttled: an affected repetition is dropped (and taken again)
// while fewer than `retries` have been dropped in this configuration.
bool discard_repetition(bool affected, bool discard_throttled, int discarded_so_far, int retries);

// Both reasons to retake a repetition: a throttled GPU (--discard-throttled,
// --throttle-retries) and a slowed host CPU (--discard-cpu-slowed, --cpu-retries).
struct DropRules {
  bool discard_throttled = false;
  int throttle_retries = 3;
  bool discard_cpu_slowed = false;
  int cpu_retries = 3;
};
// Which rules drop the last repetition. Each rule is discard_repetition with
// its own option, retries and count of repetitions it dropped in this
// configuration. A repetition both throttled and CPU-slowed is dropped when
// either rule still may, and counts against each rule that dropped it: no
// count passes its retries, and the two together retake at most
// throttle_retries + cpu_retries repetitions.
struct DroppedBy {
  bool throttle = false;
  bool cpu = false;
  bool any() const { return throttle || cpu; }
};
DroppedBy drop_repetition(bool throttled, bool cpu_slowed, const DropRules& rules, int throttle_dropped,
                          int cpu_dropped);

}  // namespace mpsb
