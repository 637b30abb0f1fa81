// Mean power from NVML's total energy counter (issue 27). The counter (mJ)
// changes only about every 100 ms, and one read takes about 4 ms, so the
// energy of a span is never the difference of two reads at its ends, and
// sparse power samples are never integrated. Instead the monitor reads the
// counter back to back; wherever two consecutive reads differ, the counter
// ticked between the start of the first and the end of the second (an edge).
// Between two edges the energy is exactly the difference of the values after
// them, and the time between them is known within the two brackets:
//
//   mean power P = (E2 - E1) / (t2 - t1),  t = the middle of an edge's bracket
//   uncertainty (relative) = (h1 + h2) / (t2 - t1) + 2 mJ / (E2 - E1)
//
// with h the half-width of each bracket (the time error of each edge) and
// 1 mJ the counter's resolution at each end. The joules of a configuration
// are then P x its kept window time; `span_s` = t2 - t1 is what was metered.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace mpsb {

// One read of the counter: the call's start and end (steady seconds) and its value.
struct CounterRead {
  double begin_s = 0, end_s = 0;
  std::uint64_t mj = 0;
};

// The counter changed between two consecutive reads: at some time in [earliest_s, latest_s].
struct CounterEdge {
  double earliest_s = 0, latest_s = 0;
  std::uint64_t mj_after = 0;
  double time() const { return 0.5 * (earliest_s + latest_s); }
  double half_width() const { return 0.5 * (latest_s - earliest_s); }
};

// Every edge of a series of reads in time order; a decrease (a driver reload) is no edge.
std::vector<CounterEdge> counter_edges(const std::vector<CounterRead>& reads);

struct PowerEstimate {
  bool available = false;
  std::string reason;        // why not, when not
  double mean_power_w = 0;
  double span_s = 0;         // t2 - t1
  double uncertainty = 0;    // relative, as above
  int ticks = 0;             // counter updates between the two edges, both counted
  bool extended = false;     // the first edge lies before `from` (fewer than two inside the span)
};

// A mean power above this comes from a broken counter, not a GPU: several times the largest GPU's power
// limit (about 1.4 kW in 2026), so no real reading is refused.
constexpr double kMaxGpuPowerW = 10000.0;

// The mean power over the span [from, to] from the edges whose brackets lie inside it. Where fewer
// than two do, the first edge may come from [extend_from, from), where the same work ran (the end of
// the warm-up): `extended` says so. Fewer than two edges in [extend_from, to], or a mean power above
// kMaxGpuPowerW: unavailable.
PowerEstimate estimate_power(const std::vector<CounterRead>& reads, double from, double to, double extend_from);

}  // namespace mpsb
