#include "measure/measure.hpp"

#include <algorithm>
#include <cmath>
#include <memory>
#include <thread>

#include <nlohmann/json.hpp>

#include "measure/clock.hpp"
#include "measure/gpu_clocks.hpp"
#include "measure/host_allreduce.hpp"
#include "measure/stop_rules.hpp"
#include "measure/team.hpp"
#include "registry.hpp"
#include "runtime/check.hpp"
#include "runtime/fault_injection.hpp"
#include "sharing/green_context.hpp"

namespace mpsb {
namespace {

constexpr std::int64_t kMaxIterations = 1'000'000'000;

// Owns the active ranks' communicator of one configuration.
class ActiveComm {
 public:
  ActiveComm(MPI_Comm world, bool active, int rank) {
    MPSB_MPI(MPI_Comm_split(world, active ? 0 : MPI_UNDEFINED, rank, &comm_));
    if (comm_ != MPI_COMM_NULL) MPSB_MPI(MPI_Comm_set_errhandler(comm_, MPI_ERRORS_RETURN));
  }
  ~ActiveComm() {
    if (comm_ != MPI_COMM_NULL) MPI_Comm_free(&comm_);
  }
  ActiveComm(const ActiveComm&) = delete;
  ActiveComm& operator=(const ActiveComm&) = delete;
  MPI_Comm get() const { return comm_; }

 private:
  MPI_Comm comm_ = MPI_COMM_NULL;
};

// The stream and events of one GPU instance, created on its own thread.
class GpuTimer {
 public:
  GpuTimer() {
    MPSB_CUDA(cudaStreamCreateWithFlags(&stream_, cudaStreamNonBlocking));
    MPSB_CUDA(cudaEventCreate(&start_));
    MPSB_CUDA(cudaEventCreate(&end_));
  }
  ~GpuTimer() {
    cudaEventDestroy(start_);
    cudaEventDestroy(end_);
    cudaStreamDestroy(stream_);
  }
  GpuTimer(const GpuTimer&) = delete;
  GpuTimer& operator=(const GpuTimer&) = delete;
  cudaStream_t stream() const { return stream_; }
  void record_start() { MPSB_CUDA(cudaEventRecord(start_, stream_)); }
  void record_end() { MPSB_CUDA(cudaEventRecord(end_, stream_)); }
  double elapsed_seconds() const {
    float ms = 0;
    MPSB_CUDA(cudaEventElapsedTime(&ms, start_, end_));
    return 1e-3 * static_cast<double>(ms);
  }

 private:
  cudaStream_t stream_ = nullptr;
  cudaEvent_t start_ = nullptr, end_ = nullptr;
};

// The repetitions decided so far: written by instance 0 between two team
// barriers, from values reduced over the active ranks (so the same on every
// rank), read by every instance after the second.
struct RepetitionState {
  std::vector<double> kept_windows;
  double first_start = 0;  // min(start) of the first repetition
  int taken = 0;
  int discarded = 0;
  bool affected = false;  // the last repetition: some GPU was throttled during it
  bool keep = false;      // the last repetition counts
  bool more = true;       // take another
};

// What the instances of one rank share while they measure together.
struct Team {
  Team(int size, MPI_Comm comm, double clock_offset, bool mix) : barrier(size), starts(size), ends(size),
        setup_failed(size), affected(size), active(comm), offset(clock_offset), mixed(mix) {}
  ThreadBarrier barrier;
  std::vector<double> starts, ends;
  std::vector<char> setup_failed;  // per instance, written before a barrier
  std::vector<char> affected;      // per instance: its GPU sampler saw throttling in this repetition
  MPI_Comm active;
  double offset;
  bool mixed;              // a mix: tenants calibrate their own iteration counts
  double window = 0;       // written by instance 0 between barriers
  double shortest_own = 0;  // likewise: the shortest end - start of any instance in the last batch
  bool any_failed = false;  // likewise: some instance of some active rank failed its setup
  RepetitionState reps;     // likewise
};

// One instance's iterations as its configuration defines them: a request
// kernel (per_iteration_latency) waits for each result and is timed on the
// host clock; --allreduce adds the host collective after each iteration.
struct IterationRunner {
  Workload& workload;
  bool per_request = false;
  HostAllreduce* allreduce = nullptr;
  std::vector<double> latencies;  // of the last run(), when per_request
  double collective_s = 0;        // of the last run()

  void run(std::int64_t count) {
    latencies.clear();
    collective_s = 0;
    if (!per_request && allreduce == nullptr) {
      for (std::int64_t i = 0; i < count; ++i) workload.run();
      return;
    }
    if (per_request) latencies.reserve(static_cast<std::size_t>(count));
    for (std::int64_t i = 0; i < count; ++i) {
      if (per_request) {
        const double start = now_seconds();
        workload.run();
        workload.sync();
        latencies.push_back(now_seconds() - start);
      } else {
        workload.run();
        workload.sync();  // the data-parallel step: results ready before they are reduced
      }
      if (allreduce != nullptr) collective_s += allreduce->reduce_and_check();
    }
  }
};

// After setup every instance of every active rank learns whether any of them
// ran out of memory: the threads through the team, the ranks through one
// MPI_Allreduce on the active communicator. Either all time or none does, so
// no rank waits in a barrier the others never reach.
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

// Every instance of every active rank starts together: the threads meet,
// instance 0 joins the MPI barrier, the threads meet again.
void start_together(Team& team, int instance) {
  team.barrier.wait();
  if (instance == 0) MPSB_MPI(MPI_Barrier(team.active));
  team.barrier.wait();
}

// One synchronized batch of `iterations` on every instance of every active
// rank; returns max(end) - min(start) over all of them, the same on each, and
// leaves the shortest single-instance time of the batch in team.shortest_own.
double timed_window(Team& team, int instance, IterationRunner& runner, std::int64_t iterations, double* own) {
  start_together(team, instance);
  const double start = now_seconds() + team.offset;
  runner.run(iterations);
  runner.workload.sync();
  team.starts[instance] = start;
  team.ends[instance] = now_seconds() + team.offset;
  *own = team.ends[instance] - start;
  team.barrier.wait();
  if (instance == 0) {
    double shortest = INFINITY;
    for (std::size_t i = 0; i < team.starts.size(); ++i) shortest = std::min(shortest, team.ends[i] - team.starts[i]);
    double local[3] = {-*std::min_element(team.starts.begin(), team.starts.end()),
                       *std::max_element(team.ends.begin(), team.ends.end()), -shortest};
    double global[3] = {0, 0, 0};
    MPSB_MPI(MPI_Allreduce(local, global, 3, MPI_DOUBLE, MPI_MAX, team.active));
    team.window = global[1] + global[0];
    team.shortest_own = -global[2];
  }
  team.barrier.wait();
  return team.window;
}

struct Calibrated {
  std::int64_t iterations = 1;
  WarmupOutcome warmup;
};

double growth_factor(double window, double min_time) {
  return window > 0 ? std::clamp(1.2 * min_time / window, 1.5, 100.0) : 100.0;
}

// Grows the batch until one window lasts min_time on all instances together,
// then keeps running batches of that count until the warm-up rule
// (stop_rules.hpp) is satisfied: long enough, calibration included, and the
// last two batches agree. Everyone sees the same reduced windows, so all
// reach the same count and the same verdict without a broadcast. In a mix
// each instance grows its own count until its own batch lasts min_time
// (tenants differ by orders of magnitude per iteration), all running together
// so each calibrates under the others' load; the warm-up then compares the
// common windows, which every rank sees alike.
Calibrated calibrate_and_warm_up(Team& team, int instance, IterationRunner& runner, const MeasureSettings& settings) {
  Calibrated out;
  double own = 0;
  auto batch = [&](std::int64_t count) {
    const double window = timed_window(team, instance, runner, count, &own);
    out.warmup.seconds += window;
    ++out.warmup.windows;
    return window;
  };
  std::int64_t& iterations = out.iterations;
  double window = batch(iterations);
  if (team.mixed) {
    while (team.shortest_own < settings.min_time_s && out.warmup.windows < 64) {
      if (own < settings.min_time_s && iterations < kMaxIterations) {
        iterations = std::min(kMaxIterations, static_cast<std::int64_t>(std::ceil(
                                                  static_cast<double>(iterations) * growth_factor(own, settings.min_time_s))));
      }
      window = batch(iterations);
    }
  } else {
    while (window < settings.min_time_s && iterations < kMaxIterations) {
      iterations = std::min(kMaxIterations, static_cast<std::int64_t>(std::ceil(
                                                static_cast<double>(iterations) * growth_factor(window, settings.min_time_s))));
      window = batch(iterations);
    }
  }
  const WarmupRule rule = warmup_rule(settings.warmup_time_s);
  const double divisor = team.mixed ? 1.0 : static_cast<double>(iterations);
  std::vector<double> at_count{window / divisor};
  WarmupVerdict verdict = warmup_verdict(out.warmup.seconds, at_count, rule);
  while (verdict == WarmupVerdict::keep_warming) {
    at_count.push_back(batch(iterations) / divisor);
    verdict = warmup_verdict(out.warmup.seconds, at_count, rule);
  }
  out.warmup.stable = verdict == WarmupVerdict::stable;
  return out;
}

RepetitionRule repetition_rule(const MeasureSettings& settings) {
  RepetitionRule rule;
  rule.min_repetitions = settings.repetitions;
  rule.max_noise = settings.max_noise;
  rule.max_time_s = settings.max_time_s.value_or(kDefaultMaxTimeS);
  rule.max_repetitions = kMaxAdaptiveRepetitions;
  return rule;
}

// After every repetition one MPI_Allreduce (MPI_MAX) over the active ranks of
// {-min start, max end, affected} gives every rank the window and whether any
// GPU was throttled in it; instance 0 of each rank then applies the same pure
// rules to the same values, so every rank keeps, drops and stops alike, and
// its threads read the verdict after the barrier.
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

// The first active rank of each GPU (slot 0, instance 0) watches its clocks.
std::unique_ptr<ClockSampler> open_sampler(const Placement& placement, int rank, int instance,
                                           std::optional<GpuClockRecord>& record) {
  const RankPlacement& where = placement.ranks[rank];
  if (placement.kind != DeviceKind::gpu || where.slot != 0 || instance != 0) return nullptr;
  auto sampler = std::make_unique<ClockSampler>(where.gpu.uuid);
  record = GpuClockRecord{};
  record->gpu_index = where.gpu.index;
  record->gpu_uuid = where.gpu.uuid;
  record->host = where.host;
  record->sampled = sampler->available();
  record->note = sampler->note();
  record->reference_mhz = sampler->reference_mhz();
  return sampler;
}

RankSamples run_instance(Team& team, int instance, const Placement& placement, const Config& config,
                         int config_index, const MeasureSettings& settings, int rank, std::int64_t* iterations,
                         const GreenPartition* partition) {
  const int slot = placement.ranks[rank].slot;
  const Config own = config_of_slot(config, slot);
  const bool on_gpu = placement.kind == DeviceKind::gpu;
  const int gpu = placement.ranks[rank].gpu.index;
  if (on_gpu) MPSB_CUDA(cudaSetDevice(gpu));  // the current device is per host thread
  RankSamples samples;
  samples.rank = rank;
  samples.instance = instance;
  samples.tenant = tenant_of_slot(config, slot);
  samples.config = own;

  // Everything that allocates: stream and events, the workload's buffers and
  // the first run (library workspaces). Out of memory here fails only this
  // configuration; every other error still ends the job.
  // --mode green: this thread's green context, declared first so that it
  // outlives the stream, events and buffers created in it.
  std::unique_ptr<GreenContext> green;
  std::unique_ptr<GpuTimer> timer;
  std::unique_ptr<Workload> workload;
  try {
    if (on_gpu && partition != nullptr) green = std::make_unique<GreenContext>(*partition, instance);
    if (on_gpu) timer = std::make_unique<GpuTimer>();
    if (green && !green->holds_stream(timer->stream())) {
      throw FatalError(error_identity() + ": --mode green: instance " + std::to_string(instance) +
                       "'s stream is not in its green context (cuStreamGetGreenCtx)");
    }
    WorkloadArgs args;
    args.device = placement.kind;
    args.gpu_ordinal = gpu;
    args.stream = timer ? timer->stream() : nullptr;
    args.precision = own.precision;
    args.size = own.size;
    args.params = own.params;
    if (green) args.sm_count = green->sm_count();
    workload = find_kernel(own.kernel)->make(args);
    workload->setup(settings.seed + 1000003ull * static_cast<std::uint64_t>(rank) +
                    7919ull * static_cast<std::uint64_t>(instance));
    inject_after_setup(rank, config_index);
    // One untimed first run: module loading, library workspaces and first
    // touch allocate here, where running out of memory is still recoverable.
    workload->run();
    workload->sync();
  } catch (const OutOfMemoryError& e) {
    samples.error = e.what();
  } catch (const std::bad_alloc& e) {
    samples.error = error_identity() + ": workload setup failed: out of host memory (" + e.what() + ")";
  }
  if (any_setup_failed(team, instance, !samples.error.empty())) {
    // An allocation failure is not sticky, but it stays in the last-error slot
    // where the next kernel-launch check would report it: clear it.
    if (on_gpu && !samples.error.empty()) static_cast<void>(cudaGetLastError());
    return samples;  // the workload and timer are freed here, before the next configuration
  }

  std::unique_ptr<HostAllreduce> allreduce;
  if (settings.allreduce_bytes) allreduce = std::make_unique<HostAllreduce>(team.active, *settings.allreduce_bytes);
  IterationRunner runner{*workload, find_kernel(own.kernel)->per_iteration_latency, allreduce.get(), {}, 0};
  std::unique_ptr<ClockSampler> sampler = open_sampler(placement, rank, instance, samples.clocks);
  const Calibrated calibrated = calibrate_and_warm_up(team, instance, runner, settings);
  const std::int64_t count = calibrated.iterations;
  samples.warmup = calibrated.warmup;
  samples.iterations = count;
  if (instance == 0) *iterations = count;

  // Which repetition is the last is known only after it, so every one starts
  // from poisoned outputs (untimed) and verification checks the last.
  do {
    workload->poison_outputs();
    workload->sync();
    if (sampler) sampler->start();  // before the barrier: its thread and first reading stay out of the window
    start_together(team, instance);
    inject_in_timed_loop(rank, config_index);
    const double start = now_seconds();
    if (timer) timer->record_start();
    runner.run(count);
    if (timer) timer->record_end();
    workload->sync();
    const double end = now_seconds();
    const ClockWindow clock = sampler ? sampler->stop() : ClockWindow{};
    team.starts[instance] = start + team.offset;
    team.ends[instance] = end + team.offset;
    const bool throttled = sampler && sampler->available() &&
                           repetition_affected(clock, sampler->reference_mhz(), settings.clock_threshold);
    team.affected[instance] = throttled || (instance == 0 && inject_throttle(rank, config_index));
    agree_on_repetition(team, instance, settings);
    if (team.reps.keep) {
      samples.start_s.push_back(start + team.offset);
      samples.end_s.push_back(end + team.offset);
      if (timer) samples.gpu_s.push_back(timer->elapsed_seconds());
      samples.affected.push_back(team.reps.affected);
      if (samples.clocks) samples.clocks->windows.push_back(clock);
      samples.latency_s.insert(samples.latency_s.end(), runner.latencies.begin(), runner.latencies.end());
      if (allreduce) samples.collective_s.push_back(runner.collective_s);
    }
  } while (team.reps.more);
  if (allreduce) {
    samples.collective_checked = allreduce->checked();
    samples.collective_wrong = allreduce->wrong();
    samples.collective_problem = allreduce->first_problem();
  }
  samples.discarded = team.reps.discarded;
  samples.work = workload->work();
  samples.details = workload->details();
  if (green) samples.details.emplace_back("green_context_sm_count", green->sm_count());
  samples.verification = workload->verify();
  return samples;
}

std::vector<RankSamples> run_team(int instances, MPI_Comm active, const Placement& placement,
                                  const Config& config, int config_index, const MeasureSettings& settings,
                                  int rank, double offset, std::int64_t* iterations) {
  Team team(instances, active, offset, config.is_mix());
  std::vector<RankSamples> samples(static_cast<std::size_t>(instances));
  // --mode green: one split of the GPU's SMs into disjoint groups, one per
  // instance, before the threads start (each then makes its own green context).
  std::unique_ptr<GreenPartition> partition;
  if (settings.green_contexts && placement.kind == DeviceKind::gpu) {
    const int gpu = placement.ranks[rank].gpu.index;
    MPSB_CUDA(cudaSetDevice(gpu));
    partition = std::make_unique<GreenPartition>(gpu, instances);
  }
  auto body = [&](int i) {
    try {
      samples[static_cast<std::size_t>(i)] = run_instance(team, i, placement, config, config_index, settings, rank,
                                                                iterations, partition.get());
    } catch (const FatalError& e) {
      // A failure on any thread ends the job: the other threads and ranks
      // would otherwise wait at a barrier forever.
      abort_fatal(e.what());
    } catch (const std::exception& e) {
      abort_fatal(error_identity() + ": " + e.what());
    }
  };
  if (instances == 1) {
    body(0);
    return samples;
  }
  std::vector<std::thread> threads;
  for (int i = 1; i < instances; ++i) threads.emplace_back(body, i);
  body(0);  // instance 0 stays on the thread that owns MPI
  for (auto& t : threads) t.join();
  return samples;
}

}  // namespace

ConfigSamples measure_config(const MpiContext& ctx, const Placement& placement, const Config& config,
                             int config_index, const MeasureSettings& settings, int active_slots,
                             int instances_per_rank, double clock_offset_s) {
  const bool active = placement.is_active(ctx.rank, active_slots);
  ActiveComm comm(ctx.world, active, ctx.rank);
  std::int64_t iterations = 0;
  nlohmann::json mine = nlohmann::json::array();
  if (active) {
    for (const auto& s : run_team(instances_per_rank, comm.get(), placement, config, config_index, settings,
                                  ctx.rank, clock_offset_s, &iterations)) {
      mine.push_back(nlohmann::json::parse(serialize(s)));
    }
  }
  // Inactive ranks wait here, asleep, for the active ones.
  quiet_barrier(ctx.world);
  const auto all = gather_strings(ctx.world, active ? mine.dump() : std::string(), 0);
  ConfigSamples out;
  out.config = config;
  out.instances_per_rank = instances_per_rank;
  out.iterations = iterations;
  for (const auto& text : all) {
    if (text.empty()) continue;
    for (const auto& s : nlohmann::json::parse(text)) {
      out.ranks.push_back(deserialize_samples(s.dump()));
      out.ranks.back().config = config_of_slot(config, placement.ranks[out.ranks.back().rank].slot);
      const std::string& error = out.ranks.back().error;
      // The instances of a --mode streams team usually fail alike: say it once.
      if (!error.empty() && out.error.find(error) == std::string::npos) {
        out.error += (out.error.empty() ? "" : "; ") + error;
      }
    }
  }
  return out;
}

}  // namespace mpsb
