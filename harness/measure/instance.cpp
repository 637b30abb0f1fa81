#include "measure/instance.hpp"

#include <memory>

#include "measure/clock.hpp"
#include "measure/gpu_clocks.hpp"
#include "measure/host_allreduce.hpp"
#include "measure/iterations.hpp"
#include "measure/warmup.hpp"
#include "registry.hpp"
#include "runtime/check.hpp"
#include "runtime/fault_injection.hpp"

namespace mpsb {
namespace {

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

}  // namespace

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

}  // namespace mpsb
