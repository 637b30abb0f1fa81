#include "results/console_reporter.hpp"

#include <cctype>
#include <cmath>
#include <cstdio>
#include <set>

#include "measure/plan.hpp"
#include "results/time_summary.hpp"

namespace mpsb {
namespace {

std::string printf_string(const char* format, double value) {
  char text[64];
  std::snprintf(text, sizeof text, format, value);
  return text;
}

std::string verification_text(const Result& r) {
  if (r.failed()) return "FAILED";
  if (!r.verified) return "FAILED";
  return "yes";
}

// Without --max-noise a noise estimate above this is marked all the same.
constexpr double kNoisyWithoutTarget = 0.02;

std::string percent_text(double fraction) {
  const double percent = 100 * fraction;
  return printf_string(percent < 0.1 ? "%.2g%%" : percent < 1 ? "%.2f%%" : "%.1f%%", percent);
}

// "0.42%", "3.1%!" (above --max-noise, or above 2% without it), "-".
std::string noise_text(const Result& r) {
  if (!r.noise.relative) return "-";
  const bool noisy = r.noise.met ? !*r.noise.met : *r.noise.relative > kNoisyWithoutTarget;
  return percent_text(*r.noise.relative) + (noisy ? "!" : "");
}

// "T2": two kept repetitions ran while a GPU was throttled; "S3": three while
// a host CPU was slowed; "T2S3" both; empty otherwise.
std::string marks_text(const Result& r) {
  std::string marks;
  if (r.clocks && r.clocks->affected_repetitions > 0) marks += "T" + std::to_string(r.clocks->affected_repetitions);
  if (r.cpu && r.cpu->slowed_repetitions > 0) marks += "S" + std::to_string(r.cpu->slowed_repetitions);
  return marks;
}

// "42.1 us", "3.20 ms"
std::string seconds_text(double s) {
  if (s < 1e-3) return printf_string("%.1f us", s * 1e6);
  if (s < 1) return printf_string("%.2f ms", s * 1e3);
  return printf_string("%.3f s", s);
}

// "2.41 pJ/FLOP", "-" where the energy is unavailable.
std::string energy_text(const Result& r) {
  if (!r.energy.available) return "-";
  static const char* prefixes[] = {"f", "p", "n", "u", "m", "", "k", "M"};
  double v = r.energy.joules_per_unit * 1e15;
  int p = 0;
  while (std::fabs(v) >= 1000.0 && p < 7) {
    v /= 1000.0;
    ++p;
  }
  return printf_string("%.3g ", v) + prefixes[p] + r.energy.unit;
}

// "87%", "-" without GPM.
std::string sm_active_text(const Result& r) {
  if (!r.gpu_activity.available || !r.gpu_activity.mean.sm_active) return "-";
  return printf_string("%.0f%%", *r.gpu_activity.mean.sm_active);
}

std::string latency_text(const stats::LatencyStats& l) {
  return "latency p50 " + seconds_text(l.p50) + " p95 " + seconds_text(l.p95) + " p99 " + seconds_text(l.p99);
}

}  // namespace

std::string format_rate(double per_second, const std::string& unit) {
  static const char* prefixes[] = {"", "k", "M", "G", "T", "P", "E"};
  int p = 0;
  double v = per_second;
  while (std::fabs(v) >= 1000.0 && p < 6) {
    v /= 1000.0;
    ++p;
  }
  const bool glue = !unit.empty() && std::isupper(static_cast<unsigned char>(unit.front()));
  std::string number = printf_string(v >= 100 ? "%.1f" : (v >= 10 ? "%.2f" : "%.3f"), v);
  return number + (glue ? " " + std::string(prefixes[p]) : " " + std::string(prefixes[p]) + (p ? " " : "")) + unit;
}

void ConsoleReporter::report_context(const Context& c) {
  max_noise_ = c.settings.max_noise;
  clock_threshold_ = c.settings.clock_threshold;
  cpu_threshold_ = c.settings.cpu_threshold;
  const auto& pl = c.placement;
  out_ << "mpsbench " << c.version << " (git " << c.git_commit.substr(0, 12) << (c.git_dirty ? "+dirty" : "")
       << ")\n";
  out_ << "  ranks: " << c.world_size << " on " << c.hosts.size() << " host(s); device: "
       << (pl.kind == DeviceKind::gpu ? "gpu" : "cpu");
  if (!c.device_note.empty()) out_ << " (" << c.device_note << ")";
  out_ << "\n";
  if (pl.kind == DeviceKind::gpu) {
    int mps_ranks = 0;
    for (const auto& r : pl.ranks) mps_ranks += r.gpu.mps_enabled ? 1 : 0;
    for (const RankPlacement* g : pl.distinct_gpus()) {
      out_ << "  GPU " << g->gpu.index << " on " << g->host << ": " << g->gpu.name << ", " << g->gpu.sm_count
           << " SMs, " << format_bytes(static_cast<double>(g->gpu.memory_total_bytes)) << ", compute mode "
           << g->gpu.compute_mode << "\n";
    }
    std::set<int> percentages;
    for (const auto& r : pl.ranks) {
      if (r.gpu.mps_active_thread_percentage) percentages.insert(*r.gpu.mps_active_thread_percentage);
    }
    out_ << "  MPS: enabled for " << mps_ranks << " of " << c.world_size << " ranks; CUDA driver "
         << format_cuda_version(c.cuda.driver) << ", runtime " << format_cuda_version(c.cuda.runtime);
    for (int p : percentages) out_ << "; active thread percentage " << p << "%";
    out_ << "\n";
  } else {
    out_ << "  *** running the CPU implementations: numbers describe this host's cores, not a GPU ***\n";
  }
  if (pl.uneven) {
    out_ << "  note: devices hold unequal rank counts; sweeping up to " << pl.max_ranks_per_device
         << " ranks per device, the extra ranks stay idle\n";
  }
  const SharingModeInfo& mode = mode_info(c.mode);
  out_ << "  mode: " << mode.name;
  if (*mode.banner_note != '\0') out_ << " (" << mode.banner_note << ")";
  out_ << "\n";
  out_ << "  plan: " << planned_ << " configurations, warm-up " << c.settings.warmup_time_s << " s, min time "
       << c.settings.min_time_s << " s x " << c.settings.repetitions;
  if (c.settings.max_noise) {
    out_ << "+ repetitions (until noise <= " << percent_text(*c.settings.max_noise) << ", at most "
         << c.settings.max_time_s.value_or(0) << " s)";
  } else {
    out_ << " repetitions";
  }
  if (c.settings.discard_throttled) {
    out_ << ", throttled ones retaken (up to " << c.settings.throttle_retries << ")";
  }
  if (c.settings.discard_cpu_slowed) {
    out_ << ", CPU-slowed ones retaken (up to " << c.settings.cpu_retries << ")";
  }
  out_ << "\n";
  out_ << "  results: " << results_path_ << "\n" << std::flush;
}

void ConsoleReporter::report_result(const Result& r, int index, int total) {
  const Summary& s = r.primary_summary();
  const std::string unit = r.primary_unit();
  char head[256];
  if (r.config.is_mix()) {
    std::snprintf(head, sizeof head, "[%*d/%d] mix %s ranks/gpu %d %s: ", total >= 100 ? 3 : 2, index, total,
                  r.config.precision.c_str(), r.config.ranks_per_gpu, r.mode.c_str());
  } else {
    std::snprintf(head, sizeof head, "[%*d/%d] %s %s size %lld ranks/gpu %d %s: ", total >= 100 ? 3 : 2, index,
                  total, r.config.kernel.c_str(), r.config.precision.c_str(), static_cast<long long>(r.config.size),
                  r.config.ranks_per_gpu, r.mode.c_str());
  }
  results_.push_back(r);
  if (r.failed()) {
    out_ << head << "FAILED: " << r.error << "\n" << std::flush;
    return;
  }
  out_ << head << format_rate(s.median, unit) << " (min " << format_rate(s.min, unit) << ", cv "
       << printf_string("%.1f%%", 100 * r.cv) << ", noise " << noise_text(r) << ", " << r.repetitions
       << " reps";
  if (const std::string t = marks_text(r); !t.empty()) out_ << ", " << t;
  out_ << ")";
  if (r.speedup) out_ << ", speedup " << printf_string("%.2f", *r.speedup);
  if (r.energy.available) {
    out_ << ", " << energy_text(r) << " (" << printf_string("%.0f W", r.energy.mean_power_w) << ", +-"
         << percent_text(r.energy.uncertainty) << ")";
  }
  if (r.gpu_activity.available) out_ << ", SM active " << sm_active_text(r);
  if (r.latency) out_ << ", " << latency_text(*r.latency);
  if (r.collective) {
    out_ << ", allreduce " << seconds_text(r.collective->time_per_iteration_s.median) << "/iteration ("
         << percent_text(r.collective->fraction_of_iteration) << ")" << (r.collective->ok ? "" : " WRONG");
  }
  if (!r.config.is_mix()) out_ << ", fairness " << printf_string("%.3f", r.jain_fairness);
  out_ << ", ";
  if (r.verified) {
    out_ << "verified (max err " << printf_string("%.1e", r.max_rel_error.value_or(0)) << ")";
  } else {
    out_ << "VERIFICATION FAILED";
    for (const auto& rr : r.ranks) {
      if (!rr.verification.ok) {
        out_ << " on rank " << rr.rank << ": " << rr.verification.detail;
        break;
      }
    }
    if (r.collective && !r.collective->ok) out_ << "; " << r.collective->detail;
  }
  out_ << "\n";
  for (const auto& t : r.tenants) {
    out_ << "      tenant " << t.spec.kernel << "/" << t.spec.precision << "/" << t.spec.size << " x"
         << t.spec.ranks_per_gpu << ": " << format_rate(t.throughput.median, t.unit);
    if (t.alone_throughput) out_ << " (alone " << format_rate(*t.alone_throughput, t.unit) << ")";
    if (t.slowdown) out_ << ", slowdown " << printf_string("%.2fx", *t.slowdown);
    if (t.latency) out_ << ", " << latency_text(*t.latency);
    if (t.latency_p99_ratio) out_ << " (p99 " << printf_string("%.2fx", *t.latency_p99_ratio) << " alone)";
    out_ << "\n";
  }
  out_ << std::flush;
}

void ConsoleReporter::report_timing(int /*index*/, const ConfigTiming& timing) {
  if (!results_.empty()) results_.back().timing = timing;
}

void ConsoleReporter::finish(const JobTiming& job) {
  out_ << "\n";
  char line[240];
  std::snprintf(line, sizeof line, "%-8s %-14s %8s %9s %20s %8s %8s %7s %7s %14s %9s %8s\n", "kernel", "precision",
                "size", "ranks/gpu", "aggregate", "speedup", "fairness", "noise", "clk/cpu", "J/unit", "SM active",
                "verified");
  out_ << line;
  bool throttled = false, slowed = false;
  for (const auto& r : results_) {
    const std::string rate = r.failed() ? "FAILED" : format_rate(r.primary_summary().median, r.primary_unit());
    const std::string fairness = r.failed() ? "-" : printf_string("%.3f", r.jain_fairness);
    const std::string speedup = r.speedup ? printf_string("%.2f", *r.speedup) : "-";
    const std::string marks = marks_text(r);
    throttled = throttled || (r.clocks && r.clocks->affected_repetitions > 0);
    slowed = slowed || (r.cpu && r.cpu->slowed_repetitions > 0);
    std::snprintf(line, sizeof line, "%-8s %-14s %8lld %9d %20s %8s %8s %7s %7s %14s %9s %8s\n",
                  r.config.kernel.c_str(), r.config.precision.c_str(), static_cast<long long>(r.config.size),
                  r.config.ranks_per_gpu, rate.c_str(), speedup.c_str(), fairness.c_str(), noise_text(r).c_str(),
                  marks.c_str(), energy_text(r).c_str(), sm_active_text(r).c_str(), verification_text(r).c_str());
    out_ << line;
    if (r.failed()) out_ << "  FAILED: " << r.error << "\n";
  }
  out_ << "noise: relative standard error of the median aggregate (! above "
       << (max_noise_ ? "--max-noise " + percent_text(*max_noise_) : std::string("2%, no --max-noise given"))
       << "); clk/cpu Tn: n repetitions ran while a GPU was throttled (power or thermal event, or SM clock below "
       << percent_text(clock_threshold_) << " of its maximum)" << (throttled ? "" : ", none here")
       << ", Sn: n ran while a host CPU was slowed (a timed thread's CPU probe more than "
       << percent_text(cpu_threshold_) << " slower than its fastest)" << (slowed ? "" : ", none here")
       << "; J/unit: GPU energy per unit of work over the kept repetitions, every GPU (- where unavailable: "
       << (results_.empty() || results_.front().energy.available ? std::string("see the results file")
                                                                  : results_.front().energy.reason)
       << "); SM active: GPM's mean SM activity\n";
  bool any_latency = false;
  for (const auto& r : results_) any_latency = any_latency || r.latency.has_value();
  if (any_latency) {
    out_ << "\nlatency per request (host clock, all ranks):\n";
    std::snprintf(line, sizeof line, "%-10s %-9s %8s %9s %20s %10s %10s %10s\n", "kernel", "precision", "size",
                  "ranks/gpu", "aggregate", "p50", "p95", "p99");
    out_ << line;
    for (const auto& r : results_) {
      if (!r.latency) continue;
      std::snprintf(line, sizeof line, "%-10s %-9s %8lld %9d %20s %10s %10s %10s\n", r.config.kernel.c_str(),
                    r.config.precision.c_str(), static_cast<long long>(r.config.size), r.config.ranks_per_gpu,
                    format_rate(r.primary_summary().median, r.primary_unit()).c_str(),
                    seconds_text(r.latency->p50).c_str(), seconds_text(r.latency->p95).c_str(),
                    seconds_text(r.latency->p99).c_str());
      out_ << line;
    }
  }
  int failed = 0, unverified = 0;
  for (const auto& r : results_) {
    failed += r.failed() ? 1 : 0;
    unverified += !r.failed() && !r.verified ? 1 : 0;
  }
  KernelTimings timings;
  for (const auto& r : results_) timings.emplace_back(r.config.kernel, r.timing);
  out_ << "\ntime per kernel (this job's configurations):\n" << time_by_kernel(timings);
  out_ << time_summary_line(timings, job) << "\n";
  out_ << "\n" << results_.size() << " configurations, " << failed << " failed, " << unverified
       << " failed verification; results in " << results_path_ << "\n" << std::flush;
}

}  // namespace mpsb
