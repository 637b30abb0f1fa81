// Each timed thread's watch over its host CPU (README "Measurement protocol",
// docs/measurement.md "Host CPUs"): just before every repetition (before the
// start barrier) and just after its window it runs the CPU probe
// (cpu_probe.hpp) and reads its counters (cpu_counters.hpp). Its reference is
// the fastest probe it has run in this job at the same load, the configuration's
// ranks per GPU: the watches live in the job's state and outlast configurations.
// Per load because the job's own ranks slow the probe: on a shared host whose
// vCPUs are hyperthreads of fewer cores, the probe ran 1.9x slower at 8 ranks
// per GPU than at 1 on an H200 machine (2026-11-28), and against one reference
// every repetition at 8 ranks was "slowed". A repetition's probe ratio, per
// thread, is min(probe before, probe after) / that reference; the ranks agree on
// the largest (team.hpp) and judge it with cpu_slowed().
#pragma once

#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "measure/cpu_counters.hpp"
#include "measure/cpu_probe.hpp"

namespace mpsb {

// The rule: a repetition is CPU-slowed when some timed thread's ratio exceeds 1 + threshold
// (--cpu-threshold, a fraction).
bool cpu_slowed(double probe_ratio, double threshold);

// A fault-injected CPU-slowed repetition (MPSBENCH_FAULT=cpu_slow) reports a probe twice the ratio the
// threshold allows, so the record stays consistent with the rule above.
double injected_probe_ratio(double threshold);

// One thread's view of one repetition.
struct CpuReading {
  double ratio = 1;  // >= 1: the reference includes this repetition's probes
  std::optional<double> steal_s;      // nullopt: unreadable (CpuWatch::note says why)
  std::optional<double> run_delay_s;  // likewise
};

class CpuWatch {
 public:
  // Probes the first calibration takes: the reference before any repetition.
  static constexpr int kCalibrationProbes = 20;

  explicit CpuWatch(std::string proc_root);
  // On the timed thread, before the start barrier, at `load` (the configuration's ranks per GPU). The
  // first call at a load calibrates that load's reference (the first call at all makes the probe there).
  void before(int load);
  // On the timed thread, after the window.
  CpuReading after();
  // The fastest probe so far at the last load (seconds); nullopt before the first repetition.
  std::optional<double> reference_s() const;
  // What could not be read, each reason once; empty when all went well.
  const std::string& note() const { return note_; }

 private:
  std::string proc_root_;
  long ticks_per_second_;
  std::unique_ptr<CpuProbe> probe_;
  std::map<int, double> references_;  // load -> fastest probe at it
  double* reference_s_ = nullptr;     // the current load's
  double before_s_ = 0;
  CpuCounterSnapshot before_counters_;
  std::string note_;
};

// The job's watches, one per instance index, kept across configurations (measure.hpp's JobState).
class CpuWatches {
 public:
  // Before the instance threads start: room for `instances` (those made earlier are kept).
  void prepare(int instances);
  CpuWatch& of(int instance) { return *watches_[static_cast<std::size_t>(instance)]; }

 private:
  std::vector<std::unique_ptr<CpuWatch>> watches_;
};

}  // namespace mpsb
