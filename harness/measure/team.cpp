#include "measure/team.hpp"

#include <algorithm>

#include "measure/stop_rules.hpp"
#include "runtime/check.hpp"

namespace mpsb {
namespace {

RepetitionRule repetition_rule(const MeasureSettings& settings) {
  RepetitionRule rule;
  rule.min_repetitions = settings.repetitions;
  rule.max_noise = settings.max_noise;
  rule.max_time_s = settings.max_time_s.value_or(kDefaultMaxTimeS);
  rule.max_repetitions = kMaxAdaptiveRepetitions;
  return rule;
}

DropRules drop_rules(const MeasureSettings& settings) {
  return DropRules{settings.discard_throttled, settings.throttle_retries, settings.discard_cpu_slowed,
                   settings.cpu_retries};
}

// The slots of the per-repetition reduction (all MPI_MAX).
enum Reduced { kMinusStart, kEnd, kAffected, kCpuRatio, kSteal, kRunDelay, kStealUnknown, kRunDelayUnknown, kReduced };

// This rank's part: the extremes over its instances.
void local_values(const Team& team, double (&local)[kReduced]) {
  local[kMinusStart] = -*std::min_element(team.starts.begin(), team.starts.end());
  local[kEnd] = *std::max_element(team.ends.begin(), team.ends.end());
  local[kAffected] = static_cast<double>(*std::max_element(team.affected.begin(), team.affected.end()));
  local[kCpuRatio] = local[kSteal] = local[kRunDelay] = local[kStealUnknown] = local[kRunDelayUnknown] = 0;
  for (const CpuReading& r : team.cpu) {
    local[kCpuRatio] = std::max(local[kCpuRatio], r.ratio);
    local[kSteal] = std::max(local[kSteal], r.steal_s.value_or(0));
    local[kRunDelay] = std::max(local[kRunDelay], r.run_delay_s.value_or(0));
    if (!r.steal_s) local[kStealUnknown] = 1;
    if (!r.run_delay_s) local[kRunDelayUnknown] = 1;
  }
}

}  // namespace

bool any_setup_failed(Team& team, int instance, bool failed) {
  team.setup_failed[static_cast<std::size_t>(instance)] = failed ? 1 : 0;
  team.barrier.wait();
  if (instance == 0) {
    int local = 0;
    for (char f : team.setup_failed) local = std::max(local, static_cast<int>(f));
    int global = 0;
    MPSB_MPI(MPI_Allreduce(&local, &global, 1, MPI_INT, MPI_MAX, team.active));
    team.any_failed = global != 0;
  }
  team.barrier.wait();
  return team.any_failed;
}

void start_together(Team& team, int instance) {
  team.barrier.wait();
  if (instance == 0) MPSB_MPI(MPI_Barrier(team.active));
  team.barrier.wait();
}

void next_turn(Team& team, int instance, long config, long step) {
  if (team.turns == nullptr || !team.turns->enabled()) return;
  team.barrier.wait();
  if (instance == 0) team.turns->pass(team.active, config, step);
  team.barrier.wait();
}

void agree_on_repetition(Team& team, int instance, const MeasureSettings& settings) {
  team.barrier.wait();
  if (instance == 0) {
    double local[kReduced];
    local_values(team, local);
    double global[kReduced] = {};
    MPSB_MPI(MPI_Allreduce(local, global, kReduced, MPI_DOUBLE, MPI_MAX, team.active));
    RepetitionState& st = team.reps;
    if (st.taken++ == 0) st.first_start = -global[kMinusStart];
    const double window = global[kEnd] + global[kMinusStart];  // the same max(end) - min(start) summarize computes
    st.all_windows_s += window;
    st.affected = global[kAffected] > 0;
    st.cpu_ratio = global[kCpuRatio];
    st.steal_s = global[kStealUnknown] > 0 ? std::nullopt : std::optional<double>(global[kSteal]);
    st.run_delay_s = global[kRunDelayUnknown] > 0 ? std::nullopt : std::optional<double>(global[kRunDelay]);
    st.cpu_slowed = cpu_slowed(st.cpu_ratio, settings.cpu_threshold);
    const DroppedBy dropped =
        drop_repetition(st.affected, st.cpu_slowed, drop_rules(settings), st.discarded, st.cpu_discarded);
    st.keep = !dropped.any();
    if (st.keep) {
      st.kept_windows.push_back(window);
    } else {
      st.discarded += dropped.throttle ? 1 : 0;
      st.cpu_discarded += dropped.cpu ? 1 : 0;
    }
    // A dropped repetition is always taken again, so the last one run is kept
    // and verification checks the output of a kept repetition.
    st.more = !st.keep || repetition_verdict(st.kept_windows, global[kEnd] - st.first_start,
                                             repetition_rule(settings)) == RepetitionVerdict::repeat;
  }
  team.barrier.wait();
}

}  // namespace mpsb
