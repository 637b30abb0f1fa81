#include "measure/warmup.hpp"

#include <algorithm>
#include <cmath>
#include <vector>

#include "measure/clock.hpp"
#include "measure/stop_rules.hpp"
#include "runtime/check.hpp"

namespace mpsb {
namespace {

constexpr std::int64_t kMaxIterations = 1'000'000'000;

// One synchronized batch of `iterations` on every instance of every active
// rank; returns max(end) - min(start) over all of them, the same on each, and
// leaves the shortest single-instance time of the batch in team.shortest_own.
double timed_window(Team& team, int instance, IterationRunner& runner, std::int64_t iterations, double* own) {
  start_together(team, instance);
  const double start = now_seconds() + team.offset;
  runner.run(iterations);
  runner.workload.sync();
  team.starts[instance] = start;
  team.ends[instance] = now_seconds() + team.offset;
  *own = team.ends[instance] - start;
  team.barrier.wait();
  if (instance == 0) {
    double shortest = INFINITY;
    for (std::size_t i = 0; i < team.starts.size(); ++i) shortest = std::min(shortest, team.ends[i] - team.starts[i]);
    double local[3] = {-*std::min_element(team.starts.begin(), team.starts.end()),
                       *std::max_element(team.ends.begin(), team.ends.end()), -shortest};
    double global[3] = {0, 0, 0};
    MPSB_MPI(MPI_Allreduce(local, global, 3, MPI_DOUBLE, MPI_MAX, team.active));
    team.window = global[1] + global[0];
    team.shortest_own = -global[2];
  }
  team.barrier.wait();
  return team.window;
}

double growth_factor(double window, double min_time) {
  return window > 0 ? std::clamp(1.2 * min_time / window, 1.5, 100.0) : 100.0;
}

}  // namespace

Calibrated calibrate_and_warm_up(Team& team, int instance, IterationRunner& runner, const MeasureSettings& settings) {
  Calibrated out;
  double own = 0;
  auto batch = [&](std::int64_t count) {
    const double window = timed_window(team, instance, runner, count, &own);
    out.warmup.seconds += window;
    ++out.warmup.windows;
    return window;
  };
  std::int64_t& iterations = out.iterations;
  out.final_count_since_s = now_seconds();
  double window = batch(iterations);
  if (team.mixed) {
    while (team.shortest_own < settings.min_time_s && out.warmup.windows < 64) {
      if (own < settings.min_time_s && iterations < kMaxIterations) {
        iterations = std::min(kMaxIterations, static_cast<std::int64_t>(std::ceil(
                                                  static_cast<double>(iterations) * growth_factor(own, settings.min_time_s))));
      }
      out.final_count_since_s = now_seconds();
      window = batch(iterations);
    }
  } else {
    while (window < settings.min_time_s && iterations < kMaxIterations) {
      iterations = std::min(kMaxIterations, static_cast<std::int64_t>(std::ceil(
                                                static_cast<double>(iterations) * growth_factor(window, settings.min_time_s))));
      out.final_count_since_s = now_seconds();
      window = batch(iterations);
    }
  }
  const WarmupRule rule = warmup_rule(settings.warmup_time_s);
  const double divisor = team.mixed ? 1.0 : static_cast<double>(iterations);
  std::vector<double> at_count{window / divisor};
  WarmupVerdict verdict = warmup_verdict(out.warmup.seconds, at_count, rule);
  while (verdict == WarmupVerdict::keep_warming) {
    at_count.push_back(batch(iterations) / divisor);
    verdict = warmup_verdict(out.warmup.seconds, at_count, rule);
  }
  out.warmup.stable = verdict == WarmupVerdict::stable;
  return out;
}

bool stretch_more(const MeasureSettings& settings, double stretched_s, double window_s, int batches) {
  if (settings.energy_min_span_s <= 0 || batches >= kMaxStretchBatches || !(window_s >= 0)) return false;
  return stretched_s + settings.repetitions * window_s < settings.energy_min_span_s;
}

void run_stretch(Team& team, int instance, IterationRunner& runner, std::int64_t count,
                 const MeasureSettings& settings) {
  // The repetitions to come are estimated from the shortest window seen, not the latest: one slow batch
  // would otherwise end the stretch early and leave the metered span short of energy_min_span_s.
  double own = 0, stretched = 0, shortest = team.window;
  for (int b = 0; stretch_more(settings, stretched, shortest, b); ++b) {
    const double window = timed_window(team, instance, runner, count, &own);
    stretched += window;
    shortest = std::min(shortest, window);
  }
}

}  // namespace mpsb
