#include "telemetry/energy_meter.hpp"

#include <cstdio>

namespace mpsb {

std::vector<CounterEdge> counter_edges(const std::vector<CounterRead>& reads) {
  std::vector<CounterEdge> edges;
  for (std::size_t i = 1; i < reads.size(); ++i) {
    if (reads[i].mj > reads[i - 1].mj) edges.push_back({reads[i - 1].begin_s, reads[i].end_s, reads[i].mj});
  }
  return edges;
}

PowerEstimate estimate_power(const std::vector<CounterRead>& reads, double from, double to, double extend_from) {
  PowerEstimate p;
  const std::vector<CounterEdge> edges = counter_edges(reads);
  const CounterEdge* first = nullptr;
  const CounterEdge* last = nullptr;
  const CounterEdge* first_extended = nullptr;
  for (const auto& e : edges) {
    if (e.latest_s > to) break;
    if (e.earliest_s >= from) {
      if (first == nullptr) first = &e;
      last = &e;
    } else if (e.earliest_s >= extend_from && first_extended == nullptr) {
      first_extended = &e;
    }
  }
  if (last != nullptr && first == last && first_extended != nullptr) {
    first = first_extended;
    p.extended = true;
  }
  if (first == nullptr || first == last) {
    char text[200];
    std::snprintf(text, sizeof text,
                  "the metered span (%.2f s) held fewer than two updates of the energy counter (NVML updates it "
                  "about every 0.1 s): a longer --energy-min-span (--preset energy) meters it",
                  to - from);
    p.reason = text;
    return p;
  }
  const double seconds = last->time() - first->time();
  const double millijoules = static_cast<double>(last->mj_after - first->mj_after);
  if (!(seconds > 0) || !(millijoules > 0)) {
    p.reason = "the energy counter's updates are out of order";
    return p;
  }
  if (millijoules / 1000.0 / seconds > kMaxGpuPowerW) {
    char text[200];
    std::snprintf(text, sizeof text,
                  "the energy counter rose by %.6g J in %.3g s (%.3g W), more than any GPU draws: a broken counter",
                  millijoules / 1000.0, seconds, millijoules / 1000.0 / seconds);
    p.reason = text;
    return p;
  }
  p.available = true;
  p.span_s = seconds;
  p.mean_power_w = millijoules / 1000.0 / seconds;
  p.uncertainty = (first->half_width() + last->half_width()) / seconds + 2.0 / millijoules;
  for (const auto& e : edges) p.ticks += (&e >= first && &e <= last) ? 1 : 0;
  return p;
}

}  // namespace mpsb
