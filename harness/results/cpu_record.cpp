#include "results/cpu_record.hpp"

#include <algorithm>

#include "measure/cpu_probe.hpp"

namespace mpsb {
namespace {

void add_note(std::string& note, const std::string& text) {
  if (!text.empty() && note.find(text) == std::string::npos) note += (note.empty() ? "" : "; ") + text;
}

}  // namespace

std::optional<CpuRecord> cpu_record(const ConfigSamples& samples, const MeasureSettings& settings) {
  if (samples.ranks.empty() || !samples.ranks.front().cpu) return std::nullopt;
  const RankSamples& first = samples.ranks.front();  // the lowest active rank's first instance
  const CpuSamples& agreed = *first.cpu;             // the per-repetition figures are the same on every instance
  CpuRecord c;
  c.probe = cpu_probe_name();
  c.threshold = settings.cpu_threshold;
  c.repetition_slowed = agreed.slowed;
  c.slowed_repetitions = static_cast<int>(std::count(agreed.slowed.begin(), agreed.slowed.end(), true));
  c.discarded_repetitions = agreed.discarded;
  c.probe_ratio = agreed.ratio;
  if (agreed.steal_known) c.steal_s = agreed.steal_s;
  if (agreed.run_delay_known) c.run_delay_s = agreed.run_delay_s;
  for (const RankSamples& s : samples.ranks) {
    if (!s.cpu) continue;
    add_note(c.note, s.cpu->note);
    if (s.rank == first.rank && s.cpu->reference_s) {
      c.reference_s = c.reference_s ? std::min(*c.reference_s, *s.cpu->reference_s) : *s.cpu->reference_s;
    }
  }
  // A null list always comes with its reason: the instance that could not read says why in its note.
  if ((!c.steal_s || !c.run_delay_s) && c.note.empty()) c.note = "some timed thread could not read its CPU counters";
  return c;
}

nlohmann::ordered_json cpu_json(const CpuRecord& c) {
  using ojson = nlohmann::ordered_json;
  return ojson{{"probe", c.probe},
               {"threshold", c.threshold},
               {"reference_probe_s", c.reference_s ? ojson(*c.reference_s) : ojson(nullptr)},
               {"slowed_repetitions", c.slowed_repetitions},
               {"discarded_repetitions", c.discarded_repetitions},
               {"repetition_slowed", c.repetition_slowed},
               {"probe_ratio", c.probe_ratio},
               {"steal_s", c.steal_s ? ojson(*c.steal_s) : ojson(nullptr)},
               {"run_delay_s", c.run_delay_s ? ojson(*c.run_delay_s) : ojson(nullptr)},
               {"note", c.note}};
}

}  // namespace mpsb
