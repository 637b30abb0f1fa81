// The records the suite produces: one Context per run and one flat Result per
// configuration, built on rank 0 from the gathered samples.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <tuple>
#include <string>
#include <vector>

#include "measure/placement.hpp"
#include "measure/plan.hpp"
#include "measure/samples.hpp"
#include "measure/settings.hpp"
#include "measure/stats.hpp"
#include "measure/timing.hpp"
#include "results/cpu_record.hpp"
#include "results/energy_record.hpp"
#include "sharing/device.hpp"
#include "sharing/mps_servers.hpp"
#include "sharing/sharing_state.hpp"
#include "workload.hpp"

namespace mpsb {

struct Summary {
  double median = 0, min = 0, max = 0;
  std::vector<double> samples;  // per repetition
};

struct RankResult {
  int rank = 0;
  int instance = 0;  // > 0 only in --mode streams and green
  std::string host;
  int local_rank = 0;
  int gpu_index = -1;
  std::string gpu_uuid;
  bool mps_enabled = false;
  int sm_count = 0;
  Summary iteration_time_s;                  // wall clock per iteration
  std::optional<Summary> gpu_iteration_time_s;  // CUDA events per iteration (GPU only)
  double throughput = 0;                     // primary metric per second, from the median window
  Verification verification;
  std::vector<std::pair<std::string, double>> details;  // kernel-specific, units in the names
  std::optional<stats::LatencyStats> latency_s;         // per request, for latency kernels
  std::optional<Summary> collective_time_s;             // --allreduce, per iteration
  std::optional<int> tenant;                            // index into Result::tenants for a mix
};

// --allreduce: the host collective after every iteration, timed apart.
struct CollectiveRecord {
  std::int64_t bytes = 0;
  Summary time_per_iteration_s;  // one sample per active rank: its median per iteration
  double fraction_of_iteration = 0;  // median collective time / median iteration time
  std::int64_t checked_values = 0;
  bool ok = true;
  std::string detail;
};

// The same tenant alone on the GPU, measured earlier in the run.
struct TenantBaseline {
  double throughput = 0;
  std::optional<double> latency_p99_s;
};
// (kernel, precision, size, ranks per GPU) -> baseline; the tenant's params are the run's.
using TenantBaselines = std::map<std::tuple<std::string, std::string, std::int64_t, int>, TenantBaseline>;

// One tenant of a mix: its own aggregate over its ranks, against it alone.
struct TenantResult {
  Tenant spec;
  PrimaryMetric primary = PrimaryMetric::flops;
  std::string unit;
  Summary throughput;  // per repetition: its ranks' work / (their max end - min start)
  std::optional<stats::LatencyStats> latency;
  std::optional<double> alone_throughput, alone_latency_p99_s, slowdown, latency_p99_ratio;
};

// How noisy the aggregate primary throughput of the kept repetitions is
// (stats::relative_median_standard_error) and whether --max-noise was met.
struct NoiseRecord {
  std::string estimator;
  std::optional<double> relative;  // none below two repetitions
  std::optional<double> target;    // --max-noise as a fraction; none with a fixed count
  std::optional<bool> met;         // relative <= target; none without a target
};

// The GPU clocks during the kept repetitions (measure/gpu_watch.hpp, measure/throttle.hpp).
struct ClocksRecord {
  std::string source = "none";  // "nvml" when some GPU was sampled
  std::string note;             // why not, or what could not be read
  double threshold = 0.9;
  std::optional<double> reference_mhz;  // lowest reference of the sampled GPUs
  int affected_repetitions = 0;         // of the kept ones
  int discarded_repetitions = 0;
  std::vector<bool> repetition_affected;  // per kept repetition
  std::vector<GpuClockRecord> gpus;       // the sampled GPUs
};

struct Result {
  Config config;
  DeviceKind device = DeviceKind::cpu;
  // How the active instances shared their device: the verified --mode, or
  // for --mode auto what their contexts showed ("timeslice", "mps",
  // "mps-qos", "mixed"); "cpu" on the CPU device.
  std::string mode;
  std::optional<int> mps_active_thread_percentage;  // when every active rank had the same one
  int active_ranks = 0;  // active instances: ranks, or rank x streams in --mode streams
  int instances_per_rank = 1;
  int devices = 0;
  std::int64_t iterations = 0;  // per repetition and rank
  int repetitions = 0;          // kept repetitions (the minimum asked for when failed)
  Work work;                    // per iteration and rank
  PrimaryMetric primary = PrimaryMetric::flops;
  std::vector<double> window_s;  // max(end) - min(start) per repetition
  Summary flop_per_s, byte_per_s, item_per_s;  // aggregate over active ranks
  double cv = 0;                               // of the aggregate primary throughput
  NoiseRecord noise;                           // always present, relative none when failed
  std::optional<WarmupOutcome> warmup;         // none when failed
  std::optional<ClocksRecord> clocks;          // none when failed
  std::optional<CpuRecord> cpu;                // none when failed (or no instance watched its CPU)
  std::optional<double> speedup;  // over one active rank per GPU, same mode; 1 at one rank; none without that run
  double jain_fairness = 1;
  bool verified = false;
  std::optional<double> max_rel_error;          // absent when some rank saw a non-finite error
  std::vector<RankResult> ranks;
  std::optional<stats::LatencyStats> latency;   // over every request of every instance (latency kernels)
  std::optional<CollectiveRecord> collective;   // --allreduce
  std::vector<TenantResult> tenants;            // a mix
  EnergyRecord energy;                          // over the kept repetitions, every GPU
  ActivityRecord gpu_activity;                  // GPM, mean over the GPUs
  ConfigTiming timing;                          // where its time went (report_s, wall_s: main's)
  // Non-empty: the configuration failed (out of memory on some rank) and
  // nothing was measured; only the configuration fields above are meaningful.
  std::string error;

  bool failed() const { return !error.empty(); }
  const Summary& primary_summary() const {
    return primary == PrimaryMetric::flops ? flop_per_s : primary == PrimaryMetric::bytes ? byte_per_s : item_per_s;
  }
  std::string primary_unit() const;  // "FLOP/s", "interaction/s", ...
};

// A failed configuration (samples.error non-empty) gives a failed Result.
// `settings`: the run's, for the noise target and the clock threshold.
Result summarize(const ConfigSamples& samples, const Placement& placement, SharingMode requested_mode,
                 const MeasureSettings& settings, std::optional<double> one_rank_throughput,
                 const TenantBaselines& alone = {});

// "FLOP/s", "B/s", "request/s": a kernel's primary unit from its metric and work.
std::string primary_unit_of(PrimaryMetric primary, const Work& work);
// "flop_per_s", "byte_per_s", "item_per_s": the results file's name of a metric.
const char* primary_metric_name(PrimaryMetric primary);

struct Context {
  std::string version;
  std::string git_commit;
  bool git_dirty = false;
  std::string date_utc;  // ISO 8601
  std::vector<std::string> argv;
  std::vector<std::string> hosts;
  std::string mpi_library_version;
  int world_size = 0;
  std::string device_requested;  // auto, gpu, cpu
  std::string device_note;       // why auto chose the CPU, else empty
  SharingMode mode = SharingMode::automatic;
  CudaVersions cuda;
  MeasureSettings settings;
  Placement placement;
  std::vector<Config> plan;  // every configuration of the run, in order (what --resume matches)
  std::string mix;           // --mix as given; empty: none
  // Other users' MPS servers and control daemons found before the run (kept
  // only with --other-mps-users go-on); none when not looked for (--device cpu).
  std::optional<std::vector<MpsProcess>> other_mps_processes;
  std::optional<JobTiming> timing;  // known at the end: the last write has it
};

std::string utc_timestamp_iso8601();

}  // namespace mpsb
