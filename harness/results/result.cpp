#include "results/result.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <ctime>

#include "measure/stats.hpp"
#include "registry.hpp"

namespace mpsb {
namespace {

Summary summarize_samples(std::vector<double> samples) {
  Summary s;
  s.median = stats::median(samples);
  s.min = stats::min(samples);
  s.max = stats::max(samples);
  s.samples = std::move(samples);
  return s;
}

Summary aggregate_rate(double work_per_window, const std::vector<double>& windows) {
  std::vector<double> rates;
  for (double w : windows) rates.push_back(w > 0 ? work_per_window / w : 0.0);
  return summarize_samples(std::move(rates));
}

std::string sharing_mode(Result& r, const std::vector<RankSamples>& instances, const Placement& placement,
                         SharingMode requested) {
  // On the CPU a mode that runs its instances in one process keeps its name; the others are "cpu".
  if (r.device == DeviceKind::cpu) return mode_info(requested).one_process ? to_string(requested) : "cpu";
  std::vector<SharingState> active;
  std::optional<int> percentage = placement.ranks[instances.front().rank].gpu.mps_active_thread_percentage;
  for (const auto& s : instances) {
    const GpuInfo& g = placement.ranks[s.rank].gpu;
    active.push_back(SharingState{g.mps_enabled, g.sm_count, g.mps_active_thread_percentage});
    if (g.mps_active_thread_percentage != percentage) percentage.reset();
  }
  r.mps_active_thread_percentage = percentage;
  return effective_mode(requested, active);
}

NoiseRecord noise_record(const std::vector<double>& primary_samples, const MeasureSettings& settings) {
  NoiseRecord n;
  n.estimator = stats::kNoiseEstimator;
  n.target = settings.max_noise;
  if (!primary_samples.empty()) n.relative = stats::relative_median_standard_error(primary_samples);
  if (n.target && n.relative) n.met = *n.relative <= *n.target;
  return n;
}

// The per-repetition flags are the same on every instance (agreed after each
// repetition); the clock records come from the one sampler of each GPU.
ClocksRecord clocks_record(const ConfigSamples& samples, const Placement& placement, const MeasureSettings& settings) {
  ClocksRecord c;
  c.threshold = settings.clock_threshold;
  const RankSamples& first = samples.ranks.front();
  c.repetition_affected = first.affected;
  c.affected_repetitions = static_cast<int>(std::count(first.affected.begin(), first.affected.end(), true));
  c.discarded_repetitions = first.discarded;
  if (placement.kind != DeviceKind::gpu) {
    c.note = "the CPU device has no GPU clocks";
    return c;
  }
  for (const auto& s : samples.ranks) {
    if (!s.clocks) continue;
    if (!s.clocks->note.empty() && c.note.find(s.clocks->note) == std::string::npos) {
      c.note += (c.note.empty() ? "" : "; ") + s.clocks->note;
    }
    if (!s.clocks->sampled) continue;
    c.gpus.push_back(*s.clocks);
    if (s.clocks->reference_mhz && (!c.reference_mhz || *s.clocks->reference_mhz < *c.reference_mhz)) {
      c.reference_mhz = s.clocks->reference_mhz;
    }
  }
  if (!c.gpus.empty()) c.source = "nvml";
  if (c.note.empty() && c.gpus.empty()) c.note = "no GPU was sampled";
  return c;
}


double primary_work_of(PrimaryMetric primary, const Work& work) {
  return primary == PrimaryMetric::flops ? work.flops : primary == PrimaryMetric::bytes ? work.bytes : work.items;
}

// Per repetition: max(end) - min(start) over the given instances.
std::vector<double> windows_of(const std::vector<const RankSamples*>& instances, int repetitions) {
  std::vector<double> windows;
  for (int rep = 0; rep < repetitions; ++rep) {
    double first_start = INFINITY, last_end = -INFINITY;
    for (const RankSamples* s : instances) {
      first_start = std::min(first_start, s->start_s[rep]);
      last_end = std::max(last_end, s->end_s[rep]);
    }
    windows.push_back(last_end - first_start);
  }
  return windows;
}

// Work of one repetition summed over instances, each with its own count.
double work_per_repetition(const std::vector<const RankSamples*>& instances, double Work::*field) {
  double total = 0;
  for (const RankSamples* s : instances) total += static_cast<double>(s->iterations) * (s->work.*field);
  return total;
}

std::optional<stats::LatencyStats> latency_of(const std::vector<const RankSamples*>& instances) {
  std::vector<double> all;
  for (const RankSamples* s : instances) all.insert(all.end(), s->latency_s.begin(), s->latency_s.end());
  if (all.empty()) return std::nullopt;
  return stats::latency_stats(all);
}

CollectiveRecord collective_record(const MeasureSettings& settings, const std::vector<RankResult>& ranks,
                                   const std::vector<RankSamples>& instances) {
  CollectiveRecord c;
  c.bytes = *settings.allreduce_bytes;
  std::vector<double> per_rank, iteration;
  for (const auto& rr : ranks) {
    if (!rr.collective_time_s) continue;
    per_rank.push_back(rr.collective_time_s->median);
    iteration.push_back(rr.iteration_time_s.median);
  }
  c.time_per_iteration_s = summarize_samples(per_rank);
  const double median_iteration = stats::median(iteration);
  c.fraction_of_iteration = median_iteration > 0 ? c.time_per_iteration_s.median / median_iteration : 0;
  for (const auto& s : instances) {
    c.checked_values += s.collective_checked;
    if (s.collective_wrong > 0 && c.ok) {
      c.ok = false;
      c.detail = "rank " + std::to_string(s.rank) + ": " + std::to_string(s.collective_wrong) + " of " +
                 std::to_string(s.collective_checked) + " reduced values wrong; first: " + s.collective_problem;
    }
  }
  return c;
}

TenantResult tenant_result(const Tenant& spec, const std::vector<const RankSamples*>& instances, int repetitions,
                           const TenantBaselines& alone) {
  const KernelInfo& kernel = *find_kernel(spec.kernel);
  TenantResult t;
  t.spec = spec;
  t.primary = kernel.primary;
  t.unit = primary_unit_of(kernel.primary, instances.front()->work);
  const double field_work = work_per_repetition(
      instances, kernel.primary == PrimaryMetric::flops   ? &Work::flops
                 : kernel.primary == PrimaryMetric::bytes ? &Work::bytes
                                                          : &Work::items);
  t.throughput = aggregate_rate(field_work, windows_of(instances, repetitions));
  t.latency = latency_of(instances);
  const auto it = alone.find(std::make_tuple(spec.kernel, spec.precision, spec.size, spec.ranks_per_gpu));
  if (it != alone.end()) {
    t.alone_throughput = it->second.throughput;
    t.alone_latency_p99_s = it->second.latency_p99_s;
    if (t.throughput.median > 0) t.slowdown = it->second.throughput / t.throughput.median;
    if (t.latency && t.alone_latency_p99_s && *t.alone_latency_p99_s > 0) {
      t.latency_p99_ratio = t.latency->p99 / *t.alone_latency_p99_s;
    }
  }
  return t;
}

}  // namespace

std::string primary_unit_of(PrimaryMetric primary, const Work& work) {
  if (primary == PrimaryMetric::flops) return "FLOP/s";
  if (primary == PrimaryMetric::bytes) return "B/s";
  return (work.item_unit.empty() ? std::string("item") : work.item_unit) + "/s";
}

const char* primary_metric_name(PrimaryMetric primary) {
  return primary == PrimaryMetric::flops ? "flop_per_s" : primary == PrimaryMetric::bytes ? "byte_per_s" : "item_per_s";
}

std::string Result::primary_unit() const { return primary_unit_of(primary, work); }

Result summarize(const ConfigSamples& samples, const Placement& placement, SharingMode requested_mode,
                 const MeasureSettings& settings, std::optional<double> one_rank_throughput,
                 const TenantBaselines& alone) {
  const bool mix = samples.config.is_mix();
  Result r;
  r.config = samples.config;
  r.device = placement.kind;
  r.active_ranks = static_cast<int>(samples.ranks.size());
  r.instances_per_rank = samples.instances_per_rank;
  r.devices = placement.device_count;
  r.iterations = samples.iterations;
  r.repetitions = settings.repetitions;
  // A mix adds its tenants' flops (matmul, nbody, inference all count them).
  r.primary = mix ? PrimaryMetric::flops : find_kernel(samples.config.kernel)->primary;
  r.mode = sharing_mode(r, samples.ranks, placement, requested_mode);
  r.timing = samples.timing;
  if (!samples.error.empty()) {
    r.error = samples.error;
    r.noise = noise_record({}, settings);
    r.energy = failed_energy_record();
    r.gpu_activity = failed_activity_record();
    return r;
  }
  if (!mix) r.work = samples.ranks.front().work;
  // Every instance kept the same repetitions (agreed after each one).
  const int repetitions = static_cast<int>(samples.ranks.front().start_s.size());
  r.repetitions = repetitions;
  r.warmup = samples.ranks.front().warmup;
  r.clocks = clocks_record(samples, placement, settings);
  r.cpu = cpu_record(samples, settings);

  std::vector<const RankSamples*> everyone;
  for (const auto& s : samples.ranks) everyone.push_back(&s);
  r.window_s = windows_of(everyone, repetitions);
  r.flop_per_s = aggregate_rate(work_per_repetition(everyone, &Work::flops), r.window_s);
  r.byte_per_s = aggregate_rate(work_per_repetition(everyone, &Work::bytes), r.window_s);
  r.item_per_s = aggregate_rate(work_per_repetition(everyone, &Work::items), r.window_s);
  r.cv = stats::coefficient_of_variation(r.primary_summary().samples);
  {
    const double work = repetitions * work_per_repetition(everyone, r.primary == PrimaryMetric::flops   ? &Work::flops
                                                                     : r.primary == PrimaryMetric::bytes ? &Work::bytes
                                                                                                         : &Work::items);
    std::string unit = r.primary_unit();  // "FLOP/s" -> "FLOP"
    unit = unit.substr(0, unit.size() - 2);
    const bool cpu = placement.kind == DeviceKind::cpu;
    const auto gpus = telemetry_of(samples);
    r.energy = energy_record(gpus, r.window_s, work, unit, cpu);
    r.gpu_activity = activity_record(gpus, cpu);
  }
  r.noise = noise_record(r.primary_summary().samples, settings);
  if (mix) {
    // Tenants are compared with themselves alone, not with one rank per GPU.
  } else if (r.config.ranks_per_gpu == 1) {
    r.speedup = 1.0;  // its own baseline
  } else if (one_rank_throughput && *one_rank_throughput > 0) {
    r.speedup = r.primary_summary().median / *one_rank_throughput;
  }

  std::vector<double> per_rank_throughput;
  r.verified = true;
  double max_error = 0;
  bool finite_errors = true;
  for (const auto& s : samples.ranks) {
    const RankPlacement& where = placement.ranks[s.rank];
    RankResult rr;
    rr.rank = s.rank;
    rr.instance = s.instance;
    rr.host = where.host;
    rr.local_rank = where.local_rank;
    rr.gpu_index = where.gpu.index;
    rr.gpu_uuid = where.gpu.uuid;
    rr.mps_enabled = where.gpu.mps_enabled;
    rr.sm_count = where.gpu.sm_count;
    const auto iterations = static_cast<double>(s.iterations);
    std::vector<double> per_iteration, elapsed;
    for (int rep = 0; rep < repetitions; ++rep) {
      elapsed.push_back(s.end_s[rep] - s.start_s[rep]);
      per_iteration.push_back(elapsed.back() / iterations);
    }
    rr.iteration_time_s = summarize_samples(per_iteration);
    if (!s.gpu_s.empty()) {
      std::vector<double> gpu_per_iteration;
      for (double g : s.gpu_s) gpu_per_iteration.push_back(g / iterations);
      rr.gpu_iteration_time_s = summarize_samples(gpu_per_iteration);
    }
    const double median_elapsed = stats::median(elapsed);
    const Config own = config_of_slot(samples.config, where.slot);
    const double primary_work = primary_work_of(find_kernel(own.kernel)->primary, s.work);
    rr.throughput = median_elapsed > 0 ? primary_work * iterations / median_elapsed : 0;
    per_rank_throughput.push_back(rr.throughput);
    rr.verification = s.verification;
    rr.details = s.details;
    if (!s.latency_s.empty()) rr.latency_s = stats::latency_stats(s.latency_s);
    if (!s.collective_s.empty()) {
      std::vector<double> collective_per_iteration;
      for (double c : s.collective_s) collective_per_iteration.push_back(c / iterations);
      rr.collective_time_s = summarize_samples(collective_per_iteration);
    }
    if (mix) rr.tenant = tenant_of_slot(samples.config, where.slot);
    r.verified = r.verified && s.verification.ok;
    if (std::isfinite(s.verification.max_rel_error)) {
      max_error = std::max(max_error, s.verification.max_rel_error);
    } else {
      finite_errors = false;
    }
    r.ranks.push_back(std::move(rr));
  }
  // Ranks of different tenants do different work: fairness within a mix means nothing across them.
  r.jain_fairness = mix ? 1.0 : stats::jain_fairness(per_rank_throughput);
  if (finite_errors) r.max_rel_error = max_error;
  if (!mix) r.latency = latency_of(everyone);
  if (settings.allreduce_bytes) {
    r.collective = collective_record(settings, r.ranks, samples.ranks);
    // A wrong reduction is a wrong result of the step, as a wrong kernel output is.
    r.verified = r.verified && r.collective->ok;
  }
  for (std::size_t t = 0; t < r.config.tenants.size(); ++t) {
    std::vector<const RankSamples*> members;
    for (const auto& s : samples.ranks) {
      if (tenant_of_slot(samples.config, placement.ranks[s.rank].slot) == static_cast<int>(t)) members.push_back(&s);
    }
    if (!members.empty()) r.tenants.push_back(tenant_result(r.config.tenants[t], members, repetitions, alone));
  }
  return r;
}

std::string utc_timestamp_iso8601() {
  const std::time_t now = std::chrono::system_clock::to_time_t(std::chrono::system_clock::now());
  std::tm utc{};
  gmtime_r(&now, &utc);
  char text[32];
  std::strftime(text, sizeof text, "%Y-%m-%dT%H:%M:%SZ", &utc);
  return text;
}

}  // namespace mpsb
