// The stop rules of the warm-up and of the repetitions, and the retaking of
// throttled and CPU-slowed repetitions: pure functions, checked over whole grids of inputs
// against the rules as README "Measurement protocol" states them.
#include <gtest/gtest.h>

#include <cmath>
#include <optional>
#include <vector>

#include "measure/stats.hpp"
#include "measure/stop_rules.hpp"

namespace mpsb {
namespace {

// Windows whose noise estimate is 0 (all equal) or large (±10 % around 1 s,
// as many as asked for).
std::vector<double> windows(int count, bool noisy, double base = 0.1) {
  std::vector<double> w;
  for (int i = 0; i < count; ++i) w.push_back(base * (noisy ? (i % 2 == 0 ? 0.9 : 1.1) : 1.0));
  return w;
}

TEST(RepetitionRule, FixedCountStopsExactlyAtTheCountWhateverTheNoiseAndTime) {
  for (int min = 1; min <= 12; ++min) {
    for (int kept = 0; kept <= 30; ++kept) {
      for (bool noisy : {false, true}) {
        for (double elapsed : {0.0, 1.0, 1e6}) {
          RepetitionRule rule;
          rule.min_repetitions = min;
          rule.max_time_s = 0.5;
          const auto v = repetition_verdict(windows(kept, noisy), elapsed, rule);
          EXPECT_EQ(v, kept < min ? RepetitionVerdict::repeat : RepetitionVerdict::stop_count)
              << "min " << min << " kept " << kept << " elapsed " << elapsed;
        }
      }
    }
  }
}

// The documented order: the minimum first, then the noise target, then the
// hard cap, then the time budget (no repetition that would end past it).
RepetitionVerdict expected(int kept, std::optional<double> noise, double elapsed, double median_window,
                           const RepetitionRule& rule) {
  if (kept < rule.min_repetitions) return RepetitionVerdict::repeat;
  if (noise && *noise <= *rule.max_noise) return RepetitionVerdict::stop_noise;
  if (kept >= std::max(rule.max_repetitions, rule.min_repetitions)) return RepetitionVerdict::stop_cap;
  if (elapsed + median_window > rule.max_time_s) return RepetitionVerdict::stop_time;
  return RepetitionVerdict::repeat;
}

TEST(RepetitionRule, AdaptiveVerdictOverAGridOfStates) {
  int checked = 0;
  for (int min : {3, 5, 10}) {
    for (double target : {1e-6, 0.01, 0.05, 0.5}) {
      for (int cap : {4, 20, 100}) {
        for (int kept = 0; kept <= 110; ++kept) {
          for (bool noisy : {false, true}) {
            RepetitionRule rule;
            rule.min_repetitions = min;
            rule.max_noise = target;
            rule.max_time_s = 3;
            rule.max_repetitions = cap;
            const std::vector<double> w = windows(kept, noisy);
            const std::optional<double> noise = window_noise(w);
            const double median = w.empty() ? 0 : stats::median(w);  // 0.09 for an odd noisy series
            for (double elapsed : {0.0, 1.5, 2.9 - 1e-9, 2.9, 2.9 + 1e-9, 2.91 - 1e-9, 2.91 + 1e-9, 3.0, 100.0}) {
              const auto v = repetition_verdict(w, elapsed, rule);
              EXPECT_EQ(v, expected(kept, noise, elapsed, median, rule))
                  << "min " << min << " target " << target << " cap " << cap << " kept " << kept << " noisy "
                  << noisy << " elapsed " << elapsed;
              ++checked;
            }
          }
        }
      }
    }
  }
  EXPECT_GT(checked, 50000);
}

TEST(RepetitionRule, BoundariesAreInclusiveForTheTargetAndTheBudget) {
  RepetitionRule rule;
  rule.min_repetitions = 3;
  const std::vector<double> w = {0.1, 0.11, 0.12};
  const double noise = *window_noise(w);
  rule.max_noise = noise;  // exactly met
  EXPECT_EQ(repetition_verdict(w, 0, rule), RepetitionVerdict::stop_noise);
  rule.max_noise = noise * (1 - 1e-12);
  rule.max_time_s = 0.31 + 0.11;  // elapsed + median == budget: the next one still fits
  EXPECT_EQ(repetition_verdict(w, 0.31, rule), RepetitionVerdict::repeat);
  EXPECT_EQ(repetition_verdict(w, 0.31 + 1e-9, rule), RepetitionVerdict::stop_time);
}

TEST(RepetitionRule, AMinimumAboveTheCapIsStillTaken) {
  RepetitionRule rule;
  rule.min_repetitions = 150;
  rule.max_noise = 1e-9;
  rule.max_time_s = 1e9;
  EXPECT_EQ(repetition_verdict(windows(120, true), 1, rule), RepetitionVerdict::repeat);
  EXPECT_EQ(repetition_verdict(windows(150, true), 1, rule), RepetitionVerdict::stop_cap);
}

// The loop as measure.cpp runs it: it always ends, within the budget or the cap.
TEST(RepetitionRule, SimulatedLoopsEndOnNoiseTimeOrCap) {
  for (double window : {0.001, 0.01, 0.1, 0.5}) {
    for (bool noisy : {false, true}) {
      RepetitionRule rule;
      rule.min_repetitions = 3;
      rule.max_noise = 0.01;
      rule.max_time_s = 3;
      std::vector<double> kept;
      double elapsed = 0;
      RepetitionVerdict v = RepetitionVerdict::repeat;
      while (v == RepetitionVerdict::repeat) {
        kept.push_back(window * (noisy ? (kept.size() % 2 == 0 ? 0.8 : 1.2) : 1.0));
        elapsed += kept.back();
        v = repetition_verdict(kept, elapsed, rule);
        ASSERT_LE(kept.size(), 100u);
      }
      if (!noisy) {
        EXPECT_EQ(v, RepetitionVerdict::stop_noise);
        EXPECT_EQ(kept.size(), 3u);
      } else if (window * 100 < 3) {
        // ±20 % needs about 1.25 * 0.2 / 0.01)^2 = 625 repetitions: the cap ends it first.
        EXPECT_EQ(v, RepetitionVerdict::stop_cap) << window;
      } else {
        EXPECT_EQ(v, RepetitionVerdict::stop_time) << window;
        EXPECT_LE(elapsed, 3 + 0.4 * window) << window;  // the next window may outlast the median
      }
    }
  }
}

TEST(RepetitionRule, WindowNoiseIsTheEstimatorOnRates) {
  EXPECT_FALSE(window_noise({}).has_value());
  EXPECT_FALSE(window_noise({0.1}).has_value());
  EXPECT_DOUBLE_EQ(*window_noise({0.2, 0.2, 0.2}), 0.0);
  // Rates 1/w: 10, 5, 2.5... scale-free: windows x 7 give the same estimate.
  const std::vector<double> w = {0.1, 0.2, 0.4, 0.15};
  std::vector<double> scaled;
  for (double x : w) scaled.push_back(7 * x);
  EXPECT_NEAR(*window_noise(w), *window_noise(scaled), 1e-12);
}

TEST(WarmupRule, VerdictOverAGridOfStates) {
  const WarmupRule rule = warmup_rule(0.2);
  EXPECT_DOUBLE_EQ(rule.min_time_s, 0.2);
  EXPECT_DOUBLE_EQ(rule.cap_s, 2.0);
  EXPECT_DOUBLE_EQ(rule.tolerance, 0.02);
  for (double elapsed : {0.0, 0.1, 0.2, 1.0, 1.999, 2.0, 50.0}) {
    // Fewer than two batches at the calibrated count: nothing to compare yet.
    EXPECT_EQ(warmup_verdict(elapsed, {}, rule), WarmupVerdict::keep_warming);
    EXPECT_EQ(warmup_verdict(elapsed, {1e-3}, rule), WarmupVerdict::keep_warming);
    for (double change : {0.0, 0.01, 0.0199, 0.0201, 0.05, -0.01, -0.05}) {
      const std::vector<double> times = {5e-3, 1e-3, 1e-3 * (1 + change)};
      const bool agree = std::fabs(change) <= 0.02 * std::max(1.0, 1 + change);
      WarmupVerdict want = WarmupVerdict::keep_warming;
      if (agree && elapsed >= 0.2) want = WarmupVerdict::stable;
      else if (elapsed >= 2.0) want = WarmupVerdict::gave_up;
      EXPECT_EQ(warmup_verdict(elapsed, times, rule), want) << "elapsed " << elapsed << " change " << change;
    }
  }
}

TEST(WarmupRule, OnlyTheLastTwoBatchesCountAndZeroWindowsAgree) {
  const WarmupRule rule = warmup_rule(0.2);
  EXPECT_EQ(warmup_verdict(0.5, {1.0, 2.0, 2.0}, rule), WarmupVerdict::stable);
  EXPECT_EQ(warmup_verdict(0.5, {2.0, 2.0, 1.0}, rule), WarmupVerdict::keep_warming);
  EXPECT_EQ(warmup_verdict(0.5, {0.0, 0.0}, rule), WarmupVerdict::stable);
  // --warmup-time 0: no time to wait, still one comparison.
  const WarmupRule none = warmup_rule(0);
  EXPECT_EQ(warmup_verdict(0.01, {1.0}, none), WarmupVerdict::keep_warming);
  EXPECT_EQ(warmup_verdict(0.01, {1.0, 1.001}, none), WarmupVerdict::stable);
  EXPECT_EQ(warmup_verdict(0.01, {1.0, 1.5}, none), WarmupVerdict::gave_up);
}

// A GPU that speeds up as its clocks ramp (per-iteration time decaying to a
// floor) is warm once two batches agree; one that keeps oscillating is
// given up on at the cap.
TEST(WarmupRule, SimulatedWarmUps) {
  const WarmupRule rule = warmup_rule(0.2);
  std::vector<double> times;
  double elapsed = 0;
  WarmupVerdict v = WarmupVerdict::keep_warming;
  for (int batch = 0; v == WarmupVerdict::keep_warming; ++batch) {
    times.push_back(1e-4 * (1 + 0.5 * std::exp(-batch)));  // 100 iterations of 0.1 ms
    elapsed += 100 * times.back();
    v = warmup_verdict(elapsed, times, rule);
    ASSERT_LT(batch, 1000);
  }
  EXPECT_EQ(v, WarmupVerdict::stable);
  EXPECT_GE(elapsed, 0.2);
  EXPECT_LE(std::fabs(times.back() / times[times.size() - 2] - 1), 0.02);

  times.clear();
  elapsed = 0;
  v = WarmupVerdict::keep_warming;
  for (int batch = 0; v == WarmupVerdict::keep_warming; ++batch) {
    times.push_back(1e-3 * (batch % 2 == 0 ? 1.0 : 1.05));
    elapsed += 100 * times.back();
    v = warmup_verdict(elapsed, times, rule);
    ASSERT_LT(batch, 1000);
  }
  EXPECT_EQ(v, WarmupVerdict::gave_up);
  EXPECT_GE(elapsed, 2.0);
  EXPECT_LT(elapsed, 2.0 + 0.11);
}

TEST(DiscardRule, TruthTable) {
  for (bool affected : {false, true}) {
    for (bool discard : {false, true}) {
      for (int retries = 0; retries <= 4; ++retries) {
        for (int done = 0; done <= 6; ++done) {
          EXPECT_EQ(discard_repetition(affected, discard, done, retries), affected && discard && done < retries)
              << affected << discard << " retries " << retries << " done " << done;
        }
      }
    }
  }
}

// Both rules at once: each drops by its own option, retries and count; a repetition
// both throttled and slowed counts against each rule that dropped it.
TEST(DiscardRule, BothRulesOverAGrid) {
  for (bool throttled : {false, true}) {
    for (bool slowed : {false, true}) {
      for (bool discard_t : {false, true}) {
        for (bool discard_c : {false, true}) {
          for (int dropped_t = 0; dropped_t <= 3; ++dropped_t) {
            for (int dropped_c = 0; dropped_c <= 3; ++dropped_c) {
              const DropRules rules{discard_t, 2, discard_c, 1};
              const DroppedBy by = drop_repetition(throttled, slowed, rules, dropped_t, dropped_c);
              EXPECT_EQ(by.throttle, throttled && discard_t && dropped_t < 2);
              EXPECT_EQ(by.cpu, slowed && discard_c && dropped_c < 1);
              EXPECT_EQ(by.any(), by.throttle || by.cpu);
            }
          }
        }
      }
    }
  }
}

// A configuration whose every repetition is both throttled and slowed, as agree_on_repetition runs it:
// each rule retakes up to its retries, the shared ones counted in both, then the rest are kept marked.
TEST(DiscardRule, SimulatedConfigurationRetakesAtMostBothRetries) {
  struct Case {
    DropRules rules;
    int taken, throttle_dropped, cpu_dropped;
  };
  const Case cases[] = {
      {{true, 3, true, 3}, 3 + 3, 3, 3},   // every drop wanted by both rules: counted in both
      {{true, 1, true, 3}, 3 + 3, 1, 3},   // the CPU rule goes on after the throttle rule's retries
      {{true, 2, false, 3}, 3 + 2, 2, 0},  // only the throttle rule
      {{false, 2, true, 0}, 3, 0, 0},      // --cpu-retries 0: nothing retaken
  };
  for (const Case& c : cases) {
    int taken = 0, kept = 0, dropped_t = 0, dropped_c = 0;
    while (kept < 3) {
      ++taken;
      const DroppedBy by = drop_repetition(true, true, c.rules, dropped_t, dropped_c);
      if (by.any()) {
        dropped_t += by.throttle ? 1 : 0;
        dropped_c += by.cpu ? 1 : 0;
      } else {
        ++kept;
      }
      ASSERT_LT(taken, 100);
    }
    EXPECT_EQ(taken, c.taken);
    EXPECT_EQ(dropped_t, c.throttle_dropped);
    EXPECT_EQ(dropped_c, c.cpu_dropped);
    EXPECT_LE(dropped_t, c.rules.throttle_retries);
    EXPECT_LE(dropped_c, c.rules.cpu_retries);
  }
}

}  // namespace
}  // namespace mpsb
