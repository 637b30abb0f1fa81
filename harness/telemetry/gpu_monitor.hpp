// One GPU watched continuously by one background thread (issue 28 A.2(a)):
// it reads the energy counter, the SM clock and its event reasons back to
// back, each with its time, while resumed. A repetition's clock figures are
// then the samples inside [start, end], and a span's energy the counter's
// updates inside it (energy_meter.hpp), so no NVML call runs on the timed
// path or between two windows. One monitor per GPU and job, in the process of
// the first rank of that GPU; mpsbench-meter runs one per GPU too.
#pragma once

#include <condition_variable>
#include <cstdint>
#include <deque>
#include <memory>
#include <mutex>
#include <optional>
#include <thread>
#include <vector>

#include "telemetry/energy_meter.hpp"
#include "telemetry/gpu_counters.hpp"

namespace mpsb {

// One reading of the clock and the event reasons, taken one after the other.
struct ClockSample {
  double time_s = 0;  // the middle of the two calls
  bool clock_ok = false;
  double mhz = 0;
  bool reasons_ok = false;
  std::uint64_t reasons = 0;
};

class GpuMonitor {
 public:
  // Starts the thread, paused. `counters` must not be null.
  explicit GpuMonitor(std::unique_ptr<GpuCounters> counters);
  ~GpuMonitor();
  GpuMonitor(const GpuMonitor&) = delete;
  GpuMonitor& operator=(const GpuMonitor&) = delete;

  GpuCounters& counters() { return *counters_; }
  // Sampling on (returns at once) or off (returns once the read in flight has ended).
  void resume();
  void pause();
  // Drops what was read before `time_s` (steady seconds).
  void forget_before(double time_s);

  // The clock samples whose time lies in [from, to].
  std::vector<ClockSample> clock_samples(double from, double to) const;
  // The latest clock sample before `time_s`, if any.
  std::optional<ClockSample> clock_sample_before(double time_s) const;
  // The counter reads that began at or after `from` and ended by `to`, in order.
  std::vector<CounterRead> energy_reads(double from, double to) const;

  // Between rounds of reads the thread sleeps this long, and after both clock calls without the energy
  // counter this long (the old sampler's period).
  static constexpr int kRoundSleepMs = 1;
  static constexpr int kClockOnlySleepMs = 5;
  // At most this many entries of each kind are kept (the oldest go first): hours of sampling.
  static constexpr std::size_t kMaxEntries = 1u << 20;

 private:
  void run();
  void read_energy();

  std::unique_ptr<GpuCounters> counters_;
  bool energy_ = false;  // the counter can be read
  mutable std::mutex mutex_;
  std::condition_variable wake_;
  bool active_ = false, busy_ = false, stopping_ = false;
  std::deque<ClockSample> clocks_;
  std::deque<CounterRead> reads_;
  std::thread thread_;  // last: starts after the members it uses exist
};

}  // namespace mpsb
