#include "measure/gpu_watch.hpp"

#include <algorithm>

#include "runtime/steady_clock.hpp"

namespace mpsb {

std::unique_ptr<JobMonitor> open_job_monitor(const Placement& placement, int rank, bool in_turns) {
  const RankPlacement& where = placement.ranks[static_cast<std::size_t>(rank)];
  if (where.slot != 0) return nullptr;
  auto job = std::make_unique<JobMonitor>();
  job->host = where.host;
  if (placement.kind == DeviceKind::gpu) {
    job->gpu_index = where.gpu.index;
    job->gpu_uuid = where.gpu.uuid;
  } else if (const auto fake = fake_gpu_for_cpu_device()) {
    job->gpu_uuid = *fake;
    std::string ignored;
    for (const auto& g : list_counter_gpus(ignored)) {
      if (g.uuid == *fake) job->gpu_index = g.index;
    }
  } else {
    return nullptr;
  }
  if (in_turns) {
    job->note = kNoMonitorInTurns;
    return job;
  }
  std::string problem;
  auto counters = open_gpu_counters(job->gpu_uuid, problem);
  if (!counters) {
    job->note = problem;
    return job;
  }
  std::string note;
  job->reference_mhz = counters->max_sm_clock_mhz(note);
  job->note = note;
  job->monitor = std::make_unique<GpuMonitor>(std::move(counters));
  return job;
}

ClockWindow clock_window(const std::vector<ClockSample>& samples) {
  ClockWindow w;
  int busy = 0;
  double sum = 0;
  for (const auto& s : samples) {
    if (!s.clock_ok || !s.reasons_ok) ++w.missing;
    if (s.reasons_ok) w.events |= s.reasons;
    if (!s.clock_ok) continue;
    ++w.samples;
    if (s.reasons_ok && (s.reasons & clock_event::kGpuIdle) != 0) continue;
    w.min_mhz = busy == 0 ? s.mhz : std::min(*w.min_mhz, s.mhz);
    w.max_mhz = busy == 0 ? s.mhz : std::max(*w.max_mhz, s.mhz);
    sum += s.mhz;
    ++busy;
  }
  if (busy > 0) w.mean_mhz = sum / busy;
  return w;
}

GpuWatch::GpuWatch(JobMonitor& job) : job_(job) {
  if (!job_.monitor) return;
  job_.monitor->forget_before(now_seconds());
  job_.monitor->resume();
}

GpuWatch::~GpuWatch() {
  if (job_.monitor) job_.monitor->pause();
}

GpuClockRecord GpuWatch::clock_record() const {
  GpuClockRecord record;
  record.gpu_index = job_.gpu_index;
  record.gpu_uuid = job_.gpu_uuid;
  record.host = job_.host;
  record.sampled = job_.monitor != nullptr;
  record.note = job_.note;
  record.reference_mhz = job_.reference_mhz;
  return record;
}

ClockWindow GpuWatch::repetition(double start, double end) const {
  if (!job_.monitor) return ClockWindow{};
  std::vector<ClockSample> samples = job_.monitor->clock_samples(start, end);
  if (samples.empty()) {
    const auto before = job_.monitor->clock_sample_before(start);
    if (before && start - before->time_s <= kNearestBeforeS) samples.push_back(*before);
  }
  return clock_window(samples);
}

void GpuWatch::span_begins(double extend_from) {
  extend_from_ = extend_from;
  if (job_.monitor) first_ = job_.monitor->counters().gpm_sample(first_problem_);
  span_begin_ = now_seconds();
}

GpuTelemetry GpuWatch::span_ends() {
  GpuTelemetry t;
  t.gpu_index = job_.gpu_index;
  t.gpu_uuid = job_.gpu_uuid;
  t.host = job_.host;
  if (!job_.monitor) {
    t.energy_reason = t.activity_reason = job_.note;
    return t;
  }
  const double span_end = now_seconds();
  std::string why;
  const std::unique_ptr<GpmSample> second = first_ ? job_.monitor->counters().gpm_sample(why) : nullptr;
  job_.monitor->pause();
  GpuCounters& counters = job_.monitor->counters();
  if (!counters.energy_problem().empty()) {
    t.energy_reason = counters.energy_problem();
  } else {
    const PowerEstimate p =
        estimate_power(job_.monitor->energy_reads(extend_from_, span_end), span_begin_, span_end, extend_from_);
    t.energy_available = p.available;
    t.energy_reason = p.reason;
    t.mean_power_w = p.mean_power_w;
    t.energy_span_s = p.span_s;
    t.energy_uncertainty = p.uncertainty;
    t.energy_ticks = p.ticks;
    t.energy_extended = p.extended;
  }
  if (!first_) {
    t.activity_reason = first_problem_;
  } else if (!second) {
    t.activity_reason = why;
  } else if (second->time_s - first_->time_s < kGpmMinSpanS) {
    t.activity_reason = "the metered span was shorter than GPM's 0.1 s between samples";
  } else {
    t.activity = counters.gpm_figures(*first_, *second, why);
    t.activity_span_s = second->time_s - first_->time_s;
    t.activity_available = t.activity.sm_active || t.activity.sm_occupancy || t.activity.dram_bw ||
                           t.activity.tensor_active;
    t.activity_reason = why;
  }
  first_.reset();
  return t;
}

}  // namespace mpsb
