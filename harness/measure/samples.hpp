// What measuring one configuration yields: every instance's samples, gathered
// on rank 0 for results/ to summarize, and their form on the way there
// (samples_wire.cpp).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "measure/plan.hpp"
#include "measure/throttle.hpp"
#include "measure/timing.hpp"
#include "telemetry/gpu_counters.hpp"
#include "workload.hpp"

namespace mpsb {

// How the warm-up went; the same on every instance.
struct WarmupOutcome {
  double seconds = 0;  // sum of the windows of every batch, calibration included
  int windows = 0;     // those batches
  bool stable = false;  // the last two agreed within the tolerance (else the cap ended it)
};

// What one GPU's sampler (the first active rank on it) saw in each kept repetition.
struct GpuClockRecord {
  int gpu_index = -1;
  std::string gpu_uuid;
  std::string host;
  bool sampled = false;  // NVML was usable; else `note` says why
  std::string note;
  std::optional<double> reference_mhz;
  std::vector<ClockWindow> windows;  // per kept repetition
};

// One GPU's energy and activity over a configuration's metered span
// (gpu_watch.hpp): the kept repetitions, after an extra stretch of the same
// work where --energy-min-span asks for a longer span.
struct GpuTelemetry {
  int gpu_index = -1;
  std::string gpu_uuid;
  std::string host;
  // Energy: the mean power between updates of the energy counter inside the span (telemetry/energy_meter.hpp).
  bool energy_available = false;
  std::string energy_reason;  // why not, when not
  double mean_power_w = 0;
  double energy_span_s = 0;
  double energy_uncertainty = 0;  // relative
  int energy_ticks = 0;
  bool energy_extended = false;   // the first counter update was in the warm-up's last batches
  // Activity: two GPM samples around the span.
  bool activity_available = false;
  std::string activity_reason;
  GpmFigures activity;
  double activity_span_s = 0;
};

// The host CPUs during the kept repetitions (cpu_watch.hpp). The per-repetition
// figures were agreed over every timed thread of every active rank, so they
// are the same on each instance; the reference and the note are its own.
struct CpuSamples {
  std::vector<bool> slowed;        // per kept repetition
  std::vector<double> ratio;       // likewise: the largest probe ratio
  std::vector<double> steal_s;     // likewise: the largest steal time (0 where unknown, see steal_known)
  std::vector<double> run_delay_s; // likewise: the largest run-queue wait
  bool steal_known = true;         // false: some thread could not read it in some kept repetition
  bool run_delay_known = true;
  int discarded = 0;               // CPU-slowed repetitions dropped and taken again
  std::optional<double> reference_s;  // this instance's fastest probe in the job so far
  std::string note;                   // what this instance could not read
};

// One instance's view of one configuration; times on rank 0's clock.
struct RankSamples {
  int rank = 0;
  int instance = 0;
  int tenant = 0;                      // index into Config::tenants for a mix, else 0
  Config config;                       // what this instance ran: the tenant's configuration in a mix
  std::int64_t iterations = 0;         // per repetition (tenants of a mix calibrate their own)
  std::vector<double> start_s, end_s;  // per repetition
  std::vector<double> gpu_s;           // CUDA-event time per repetition; empty on the CPU
  Work work;
  Verification verification;
  std::vector<std::pair<std::string, double>> details;  // Workload::details()
  // Kernels with per_iteration_latency: every request of the kept repetitions (host clock).
  std::vector<double> latency_s;
  // --allreduce: the collective's seconds per kept repetition, and its checks (every repetition run).
  std::vector<double> collective_s;
  std::int64_t collective_checked = 0, collective_wrong = 0;
  std::string collective_problem;
  std::string error;  // non-empty: the configuration failed (out of memory); no samples then
  // Decided together by all active instances, so the same on each:
  WarmupOutcome warmup;
  std::vector<bool> affected;  // per kept repetition: some GPU was throttled during it
  int discarded = 0;           // affected repetitions dropped and taken again
  std::optional<GpuClockRecord> clocks;  // only on the instance that sampled its GPU
  std::optional<CpuSamples> cpu;          // every timed instance (none in hand-made samples)
  std::optional<GpuTelemetry> telemetry;  // likewise
  InstanceTiming timing;
};

struct ConfigSamples {
  Config config;
  int instances_per_rank = 1;
  std::int64_t iterations = 0;     // per repetition of the first instance (a mix: see RankSamples::iterations)
  std::vector<RankSamples> ranks;  // every instance, in (rank, instance) order
  std::string error;               // the instances' errors joined; non-empty: the configuration failed
  ConfigTiming timing;             // on rank 0; report_s and wall_s are the caller's to fill in
};

// How one instance's samples travel to rank 0: a compact JSON text, and back.
std::string serialize(const RankSamples& samples);
RankSamples deserialize_samples(const std::string& text);

}  // namespace mpsb
