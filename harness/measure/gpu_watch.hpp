// Watching each GPU while a configuration runs: the job's one monitor per GPU
// (telemetry/gpu_monitor.hpp), kept by the first rank of that GPU, gives each
// repetition's clock figures (throttle.hpp judges them) and the configuration's
// energy and GPM activity over its metered span. Nothing here calls NVML on
// the timed path: the monitor reads in the background, the two GPM samples
// are taken before the first and after the last window.
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "measure/placement.hpp"
#include "measure/samples.hpp"
#include "measure/throttle.hpp"
#include "telemetry/gpu_monitor.hpp"

namespace mpsb {

// The monitor of one GPU for the whole job, or why there is none.
struct JobMonitor {
  std::unique_ptr<GpuMonitor> monitor;  // null: `note` says why
  int gpu_index = -1;
  std::string gpu_uuid;
  std::string host;
  std::string note;                     // why no monitor, or what could not be read
  std::optional<double> reference_mhz;  // the GPU's maximum SM clock
};

// For the first rank of each GPU (slot 0): its GPU's monitor (paused), else nullptr. On the CPU device
// only a test's fake names a GPU to watch (fake_gpu_for_cpu_device). In mpsbench-sweep's turns
// (`in_turns`) the job has no monitor, and says so with kNoMonitorInTurns.
std::unique_ptr<JobMonitor> open_job_monitor(const Placement& placement, int rank, bool in_turns);

// Why a job in turns has no GPU monitor. Its reads are back to back (about 4 ms an NVML call) during
// every window of its own job, and on the H200 host of 2026-11-29 they doubled the variance of the
// repetitions at one rank per GPU even from another vCPU (two sweeps of every kernel each way, in turns,
// ranks bound to cores): the spread the turns are there to remove. A configuration's metered span in turns
// also holds the other modes' repetitions, so its energy and GPM activity could not be had anyway.
inline constexpr const char* kNoMonitorInTurns =
    "no GPU monitor in mpsbench-sweep's turns (its NVML reads, back to back on another CPU, doubled the "
    "spread between repetitions, and a span holds the other modes' work): clocks, energy and GPM activity "
    "need mpsbench-sweep --turns off or mpsbench on its own";

// What the samples of one repetition say (the old sampler's rules: an idle sample's clock says nothing
// about the work's speed and is left out of the mean).
ClockWindow clock_window(const std::vector<ClockSample>& samples);

// One configuration's use of the job monitor, by the instance that owns it.
class GpuWatch {
 public:
  // Forgets earlier readings and resumes the monitor.
  explicit GpuWatch(JobMonitor& job);
  ~GpuWatch();  // pauses the monitor
  GpuWatch(const GpuWatch&) = delete;
  GpuWatch& operator=(const GpuWatch&) = delete;

  // The record the configuration's clocks add to (one window per kept repetition).
  GpuClockRecord clock_record() const;
  bool sampled() const { return job_.monitor != nullptr; }
  // The samples inside [start, end] (this process's steady clock); none inside: the latest one
  // within 50 ms before start.
  ClockWindow repetition(double start, double end) const;
  // The metered span: its first GPM sample now; `extend_from` is where the same work began (the
  // warm-up at the final count), for a span holding fewer than two energy counter updates.
  void span_begins(double extend_from);
  // Its end now: the second GPM sample, the energy estimate; the monitor pauses.
  GpuTelemetry span_ends();

  static constexpr double kNearestBeforeS = 0.05;
  // GPM needs this much between its two samples (nvml.h: "greater than 100ms").
  static constexpr double kGpmMinSpanS = 0.1;

 private:
  JobMonitor& job_;
  double span_begin_ = 0, extend_from_ = 0;
  std::unique_ptr<GpmSample> first_;
  std::string first_problem_;
};

}  // namespace mpsb
