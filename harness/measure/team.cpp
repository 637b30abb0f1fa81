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

void agree_on_repetition(Team& team, int instance, const MeasureSettings& settings) {
  team.barrier.wait();
  if (instance == 0) {
    double local[3] = {-*std::min_element(team.starts.begin(), team.starts.end()),
                       *std::max_element(team.ends.begin(), team.ends.end()),
                       static_cast<double>(*std::max_element(team.affected.begin(), team.affected.end()))};
    double global[3] = {0, 0, 0};
    MPSB_MPI(MPI_Allreduce(local, global, 3, MPI_DOUBLE, MPI_MAX, team.active));
    RepetitionState& st = team.reps;
    if (st.taken++ == 0) st.first_start = -global[0];
    st.affected = global[2] > 0;
    st.keep = !discard_repetition(st.affected, settings.discard_throttled, st.discarded, settings.throttle_retries);
    if (st.keep) {
      st.kept_windows.push_back(global[1] + global[0]);  // the same max(end) - min(start) summarize computes
    } else {
      ++st.discarded;
    }
    // A dropped repetition is always taken again, so the last one run is kept
    // and verification checks the output of a kept repetition.
    st.more = !st.keep || repetition_verdict(st.kept_windows, global[1] - st.first_start,
                                             repetition_rule(settings)) == RepetitionVerdict::repeat;
  }
  team.barrier.wait();
}

}  // namespace mpsb
