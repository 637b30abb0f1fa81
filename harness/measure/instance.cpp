#include "measure/instance.hpp"

#include <algorithm>
#include <memory>
#include <optional>

#include "measure/clock.hpp"
#include "measure/host_allreduce.hpp"
#include "measure/iterations.hpp"
#include "measure/warmup.hpp"
#include "registry.hpp"
#include "runtime/check.hpp"
#include "runtime/cpu_affinity.hpp"
#include "runtime/fault_injection.hpp"

namespace mpsb {
namespace {

// What one instance measures with: its own (made for this configuration) or kept ones.
struct Equipment {
  // --mode green: this thread's green context, declared first so that it outlives the stream, events
  // and buffers created in it.
  std::unique_ptr<GreenContext> green;
  std::unique_ptr<GpuTimer> own_timer;
  std::unique_ptr<Workload> own_workload;
  GpuTimer* timer = nullptr;
  Workload* workload = nullptr;
};

// Everything that allocates: stream and events, the workload's buffers and the first run (library
// workspaces), unless the previous configuration left the same workload. Out of memory here fails only
// this configuration; every other error still ends the job.
void set_up(const InstanceRun& run, const Config& own, Equipment& eq, RankSamples& samples, Stopwatch& phase) {
  const bool on_gpu = run.placement.kind == DeviceKind::gpu;
  CachedInstance* kept = run.kept;
  if (kept != nullptr && kept->workload && same_workload(kept->config, own)) {
    eq.timer = kept->timer.get();
    eq.workload = kept->workload.get();
    eq.workload->restart_details();
    samples.timing.reused = true;
    inject_after_setup(run.rank, run.config_index);
    samples.timing.setup_s = phase.lap();
    return;
  }
  if (kept != nullptr) {  // another workload: freed before this one allocates
    kept->workload.reset();
    kept->timer.reset();
  }
  if (on_gpu && run.partition != nullptr) eq.green = std::make_unique<GreenContext>(*run.partition, run.instance);
  if (on_gpu) eq.own_timer = std::make_unique<GpuTimer>();
  if (eq.green && !eq.green->holds_stream(eq.own_timer->stream())) {
    throw FatalError(error_identity() + ": --mode green: instance " + std::to_string(run.instance) +
                     "'s stream is not in its green context (cuStreamGetGreenCtx)");
  }
  WorkloadArgs args;
  args.device = run.placement.kind;
  args.gpu_ordinal = run.placement.ranks[run.rank].gpu.index;
  args.stream = eq.own_timer ? eq.own_timer->stream() : nullptr;
  args.precision = own.precision;
  args.size = own.size;
  args.params = own.params;
  if (eq.green) args.sm_count = eq.green->sm_count();
  eq.own_workload = find_kernel(own.kernel)->make(args);
  {
    const WideAffinity wide;  // inputs made on every CPU of the node (runtime/cpu_affinity.hpp)
    eq.own_workload->setup(run.settings.seed + 1000003ull * static_cast<std::uint64_t>(run.rank) +
                           7919ull * static_cast<std::uint64_t>(run.instance));
  }
  inject_after_setup(run.rank, run.config_index);
  samples.timing.setup_s = phase.lap();
  // One untimed first run: module loading, library workspaces and first
  // touch allocate here, where running out of memory is still recoverable.
  eq.own_workload->run();
  eq.own_workload->sync();
  samples.timing.first_run_s = phase.lap();
  eq.timer = eq.own_timer.get();
  eq.workload = eq.own_workload.get();
}

// A kept repetition's host-CPU figures, as every rank agreed on them.
void keep_cpu_figures(const RepetitionState& reps, CpuSamples& cpu) {
  cpu.slowed.push_back(reps.cpu_slowed);
  cpu.ratio.push_back(reps.cpu_ratio);
  cpu.steal_s.push_back(reps.steal_s.value_or(0));
  cpu.run_delay_s.push_back(reps.run_delay_s.value_or(0));
  cpu.steal_known = cpu.steal_known && reps.steal_s.has_value();
  cpu.run_delay_known = cpu.run_delay_known && reps.run_delay_s.has_value();
}

}  // namespace

RankSamples run_instance(const InstanceRun& run) {
  Team& team = run.team;
  const int instance = run.instance, rank = run.rank;
  const MeasureSettings& settings = run.settings;
  const int slot = run.placement.ranks[rank].slot;
  const Config own = config_of_slot(run.config, slot);
  const bool on_gpu = run.placement.kind == DeviceKind::gpu;
  if (on_gpu) MPSB_CUDA(cudaSetDevice(run.placement.ranks[rank].gpu.index));  // per host thread
  Stopwatch phase;
  RankSamples samples;
  InstanceTiming& timing = samples.timing;
  samples.rank = rank;
  samples.instance = instance;
  samples.tenant = tenant_of_slot(run.config, slot);
  samples.config = own;

  Equipment eq;
  try {
    set_up(run, own, eq, samples, phase);
  } catch (const OutOfMemoryError& e) {
    samples.error = e.what();
  } catch (const std::bad_alloc& e) {
    samples.error = error_identity() + ": workload setup failed: out of host memory (" + e.what() + ")";
  }
  const bool failed = any_setup_failed(team, instance, !samples.error.empty());
  timing.ready_s = now_seconds() - team.config_start;
  phase.lap();
  if (failed) {
    // An allocation failure is not sticky, but it stays in the last-error slot
    // where the next kernel-launch check would report it: clear it.
    if (on_gpu && !samples.error.empty()) static_cast<void>(cudaGetLastError());
    if (run.kept != nullptr) {  // nothing kept from a failed configuration: its memory goes now
      run.kept->workload.reset();
      run.kept->timer.reset();
    }
    return samples;  // what it made is freed here, before the next configuration
  }
  if (run.kept != nullptr && eq.own_workload) {  // kept for the next configuration of the same workload
    run.kept->config = own;
    run.kept->timer = std::move(eq.own_timer);
    run.kept->workload = std::move(eq.own_workload);
  }
  Workload& workload = *eq.workload;
  GpuTimer* timer = eq.timer;

  std::unique_ptr<HostAllreduce> allreduce;
  if (settings.allreduce_bytes) allreduce = std::make_unique<HostAllreduce>(team.active, *settings.allreduce_bytes);
  IterationRunner runner{workload, find_kernel(own.kernel)->per_iteration_latency, allreduce.get(), {}, 0};
  // The GPU's monitor reads in the background from here to the end of the metered span.
  std::optional<GpuWatch> watch;
  if (run.monitor != nullptr) {
    watch.emplace(*run.monitor);
    samples.clocks = watch->clock_record();
  }
  const Calibrated calibrated = calibrate_and_warm_up(team, instance, runner, settings);
  const std::int64_t count = calibrated.iterations;
  samples.warmup = calibrated.warmup;
  samples.iterations = count;
  if (instance == 0) *run.iterations = count;
  timing.warmup_s = phase.lap();

  // The metered span starts here (its first GPM sample outside every window); where the repetitions
  // alone would be too short, a stretch of the same work comes first.
  if (watch) watch->span_begins(calibrated.final_count_since_s);
  run_stretch(team, instance, runner, count, settings);
  timing.metering_s = phase.lap();

  // Which repetition is the last is known only after it, so every one starts
  // from poisoned outputs (untimed) and verification checks the last. The CPU
  // watch probes just before the start barrier and just after the window, against
  // its reference at this configuration's ranks per GPU.
  CpuWatch& cpu = *run.cpu;
  samples.cpu.emplace();
  do {
    if (team.reps.taken > 0 && team.turns != nullptr && team.turns->enabled()) {
      // In turns (runtime/turns.hpp) each repetition is one; the first is in the configuration's first turn.
      // A job in turns has no GPU monitor (kNoMonitorInTurns), so nothing of it runs in the others' turns.
      next_turn(team, instance, run.config_index - 1, team.reps.taken);
    }
    workload.poison_outputs();
    workload.sync();
    cpu.before(run.config.ranks_per_gpu);
    start_together(team, instance);
    inject_in_timed_loop(rank, run.config_index);
    const double start = now_seconds();
    if (timer) timer->record_start();
    runner.run(count);
    if (timer) timer->record_end();
    workload.sync();
    const double end = now_seconds();
    // The monitor's samples inside the window: no NVML call here.
    const ClockWindow clock = watch ? watch->repetition(start, end) : ClockWindow{};
    team.cpu[instance] = cpu.after();
    if (instance == 0 && inject_cpu_slow(rank, run.config_index)) {
      team.cpu[instance].ratio = std::max(team.cpu[instance].ratio, injected_probe_ratio(settings.cpu_threshold));
    }
    team.starts[instance] = start + team.offset;
    team.ends[instance] = end + team.offset;
    const bool throttled = watch && watch->sampled() &&
                           repetition_affected(clock, run.monitor->reference_mhz, settings.clock_threshold);
    team.affected[instance] = throttled || (instance == 0 && inject_throttle(rank, run.config_index));
    agree_on_repetition(team, instance, settings);
    if (team.reps.keep) {
      samples.start_s.push_back(start + team.offset);
      samples.end_s.push_back(end + team.offset);
      if (timer) samples.gpu_s.push_back(timer->elapsed_seconds());
      samples.affected.push_back(team.reps.affected);
      if (samples.clocks) samples.clocks->windows.push_back(clock);
      keep_cpu_figures(team.reps, *samples.cpu);
      samples.latency_s.insert(samples.latency_s.end(), runner.latencies.begin(), runner.latencies.end());
      if (allreduce) samples.collective_s.push_back(runner.collective_s);
    }
  } while (team.reps.more);
  timing.repetitions_s = phase.lap();
  timing.windows_s = team.reps.all_windows_s;
  if (watch) {
    samples.telemetry = watch->span_ends();  // its second GPM sample, after the last window
    watch.reset();
  }
  timing.metering_s += phase.lap();
  if (allreduce) {
    samples.collective_checked = allreduce->checked();
    samples.collective_wrong = allreduce->wrong();
    samples.collective_problem = allreduce->first_problem();
  }
  samples.discarded = team.reps.discarded;
  samples.cpu->discarded = team.reps.cpu_discarded;
  samples.cpu->reference_s = cpu.reference_s();
  samples.cpu->note = cpu.note();
  samples.work = workload.work();
  samples.details = workload.details();
  if (eq.green) samples.details.emplace_back("green_context_sm_count", eq.green->sm_count());
  {
    const WideAffinity wide;  // after every window of the job's configuration: the references use every CPU
    samples.verification = workload.verify();
  }
  timing.verification_s = phase.lap();
  return samples;
}

}  // namespace mpsb
