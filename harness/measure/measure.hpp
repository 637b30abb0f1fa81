// The measurement protocol for one configuration (README "Measurement
// protocol"): untimed setup, one calibrated iteration count for all active
// instances, a warm-up until the windows are steady, then repetitions of
// poison / barrier / start / iterations / sync / end, with CUDA-event GPU time
// per instance, the GPU clocks watched, until the stop rule (stop_rules.hpp)
// says enough, and verification after timing.
// An instance is one workload: one per active rank in the process modes, k
// per rank (threads and streams of one process) in --mode streams and green
// (green: each thread in its own green context, sharing/green_context.hpp).
#pragma once

#include <memory>

#include "measure/cpu_watch.hpp"
#include "measure/gpu_watch.hpp"
#include "measure/instance_cache.hpp"
#include "measure/placement.hpp"
#include "measure/plan.hpp"
#include "measure/samples.hpp"
#include "measure/settings.hpp"
#include "runtime/mpi_context.hpp"
#include "runtime/turns.hpp"

namespace mpsb {

// Collective over ctx.world (inactive ranks only wait). `instances_per_rank`
// workloads run on each active rank. The samples are complete on rank 0 and
// empty elsewhere. An out-of-memory error in any instance's setup makes every
// instance skip timing (they agree after setup), and the samples carry the
// error instead; any other error aborts the job. `config_index` is 1-based.
// What the job keeps across configurations: `cache`, this rank's workloads
// (instance_cache.hpp), `monitor`, its GPU's monitor where this rank
// watches a GPU (else nullptr), and `cpu`, each instance's CPU watch with its
// fastest probe so far (cpu_watch.hpp).
struct JobState {
  InstanceCache cache;
  std::unique_ptr<JobMonitor> monitor;
  CpuWatches cpu;
  bool said_spread = false;  // the one-process note of run_team, once per job
  Turns* turns = nullptr;    // mpsbench-sweep's turns (--turns): every repetition a turn
};
ConfigSamples measure_config(const MpiContext& ctx, const Placement& placement, const Config& config,
                             int config_index, const MeasureSettings& settings, int active_slots,
                             int instances_per_rank, double clock_offset_s, JobState& job);

}  // namespace mpsb
