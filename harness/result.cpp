#include "result.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <ctime>

#include "registry.hpp"
#include "stats.hpp"

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
  if (r.device == DeviceKind::cpu) return requested == SharingMode::streams ? "streams" : "cpu";
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

}  // namespace

std::string Result::primary_unit() const {
  if (primary == PrimaryMetric::flops) return "FLOP/s";
  return (work.item_unit.empty() ? std::string("item") : work.item_unit) + "/s";
}

Result summarize(const ConfigSamples& samples, const Placement& placement, SharingMode requested_mode,
                 const MeasureSettings& settings, std::optional<double> one_rank_throughput) {
  const KernelInfo& kernel = *find_kernel(samples.config.kernel);
  Result r;
  r.config = samples.config;
  r.device = placement.kind;
  r.active_ranks = static_cast<int>(samples.ranks.size());
  r.instances_per_rank = samples.instances_per_rank;
  r.devices = placement.device_count;
  r.iterations = samples.iterations;
  r.repetitions = settings.repetitions;
  r.primary = kernel.primary;
  r.mode = sharing_mode(r, samples.ranks, placement, requested_mode);
  if (!samples.error.empty()) {
    r.error = samples.error;
    r.noise = noise_record({}, settings);
    return r;
  }
  r.work = samples.ranks.front().work;
  // Every instance kept the same repetitions (agreed after each one).
  const int repetitions = static_cast<int>(samples.ranks.front().start_s.size());
  r.repetitions = repetitions;
  r.warmup = samples.ranks.front().warmup;
  r.clocks = clocks_record(samples, placement, settings);

  for (int rep = 0; rep < repetitions; ++rep) {
    double first_start = INFINITY, last_end = -INFINITY;
    for (const auto& s : samples.ranks) {
      first_start = std::min(first_start, s.start_s[rep]);
      last_end = std::max(last_end, s.end_s[rep]);
    }
    r.window_s.push_back(last_end - first_start);
  }
  const double iterations_done = static_cast<double>(r.iterations) * r.active_ranks;
  r.flop_per_s = aggregate_rate(iterations_done * r.work.flops, r.window_s);
  r.byte_per_s = aggregate_rate(iterations_done * r.work.bytes, r.window_s);
  r.item_per_s = aggregate_rate(iterations_done * r.work.items, r.window_s);
  r.cv = stats::coefficient_of_variation(r.primary_summary().samples);
  r.noise = noise_record(r.primary_summary().samples, settings);
  if (r.config.ranks_per_gpu == 1) {
    r.speedup = 1.0;  // its own baseline
  } else if (one_rank_throughput && *one_rank_throughput > 0) {
    r.speedup = r.primary_summary().median / *one_rank_throughput;
  }

  const double primary_work = r.primary == PrimaryMetric::flops ? r.work.flops : r.work.items;
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
    std::vector<double> per_iteration, elapsed;
    for (int rep = 0; rep < repetitions; ++rep) {
      elapsed.push_back(s.end_s[rep] - s.start_s[rep]);
      per_iteration.push_back(elapsed.back() / static_cast<double>(r.iterations));
    }
    rr.iteration_time_s = summarize_samples(per_iteration);
    if (!s.gpu_s.empty()) {
      std::vector<double> gpu_per_iteration;
      for (double g : s.gpu_s) gpu_per_iteration.push_back(g / static_cast<double>(r.iterations));
      rr.gpu_iteration_time_s = summarize_samples(gpu_per_iteration);
    }
    const double median_elapsed = stats::median(elapsed);
    rr.throughput = median_elapsed > 0 ? primary_work * static_cast<double>(r.iterations) / median_elapsed : 0;
    per_rank_throughput.push_back(rr.throughput);
    rr.verification = s.verification;
    rr.details = s.details;
    r.verified = r.verified && s.verification.ok;
    if (std::isfinite(s.verification.max_rel_error)) {
      max_error = std::max(max_error, s.verification.max_rel_error);
    } else {
      finite_errors = false;
    }
    r.ranks.push_back(std::move(rr));
  }
  r.jain_fairness = stats::jain_fairness(per_rank_throughput);
  if (finite_errors) r.max_rel_error = max_error;
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
