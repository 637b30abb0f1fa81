// Calibration and warm-up of one configuration (README "Measurement
// protocol"): the iteration count of a timed window and the batches until the
// windows are steady (stop_rules.hpp), run by every instance of every active
// rank together.
#pragma once

#include <cstdint>

#include "measure/iterations.hpp"
#include "measure/samples.hpp"
#include "measure/settings.hpp"
#include "measure/team.hpp"

namespace mpsb {

// The iteration count every timed window runs, and how the warm-up went.
struct Calibrated {
  std::int64_t iterations = 1;
  WarmupOutcome warmup;
  double final_count_since_s = 0;  // now_seconds() at the start of the first batch at the final count
};

// Grows the batch until one window lasts min_time on all instances together,
// then keeps running batches of that count until the warm-up rule
// (stop_rules.hpp) is satisfied: long enough, calibration included, and the
// last two batches agree. Everyone sees the same reduced windows, so all
// reach the same count and the same verdict without a broadcast. In a mix
// each instance grows its own count until its own batch lasts min_time
// (tenants differ by orders of magnitude per iteration), all running together
// so each calibrates under the others' load; the warm-up then compares the
// common windows, which every rank sees alike.
Calibrated calibrate_and_warm_up(Team& team, int instance, IterationRunner& runner, const MeasureSettings& settings);

// The extra metered stretch before the repetitions (--energy-min-span): after `stretched_s` of
// stretch (the sum of its batches' windows) with `window_s` the shortest window so far (the warm-up's
// last, the stretch's), whether another batch is needed so that, with the fewest repetitions the rule
// keeps, the metered work lasts at least
// energy_min_span_s. Never without the option; never past kMaxStretchBatches batches. Pure: every rank
// sees the same reduced windows and decides alike. Run before the repetitions, not after them, so that
// verification still checks a timed repetition's outputs.
inline constexpr int kMaxStretchBatches = 10000;
bool stretch_more(const MeasureSettings& settings, double stretched_s, double window_s, int batches);
// The stretch itself: synchronized, untimed batches of `count` iterations on every instance, starting
// from the warm-up's last window (team.window).
void run_stretch(Team& team, int instance, IterationRunner& runner, std::int64_t count,
                 const MeasureSettings& settings);

}  // namespace mpsb
