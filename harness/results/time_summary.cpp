#include "results/time_summary.hpp"

#include <algorithm>
#include <cstdio>

namespace mpsb {
namespace {

std::string seconds(double s) {
  char text[32];
  std::snprintf(text, sizeof text, s < 10 ? "%.2f s" : "%.1f s", s);
  return text;
}

struct Totals {
  int configs = 0;
  double wall = 0, windows = 0, warmup = 0, metering = 0, setup = 0, first_run = 0, gaps = 0, verification = 0,
         gather = 0, report = 0;

  void add(const ConfigTiming& t) {
    ++configs;
    wall += t.wall_s;
    windows += t.windows_s;
    warmup += t.warmup_s;
    metering += t.metering_s;
    setup += t.setup_s;
    first_run += t.first_run_s;
    gaps += std::max(0.0, t.repetitions_s - t.windows_s);
    verification += t.verification_s;
    gather += t.gather_s;
    report += t.report_s;
  }
};

}  // namespace

std::string time_summary_line(const KernelTimings& configs, const JobTiming& job) {
  Totals t;
  for (const auto& c : configs) t.add(c.second);
  const double all = std::max(job.total_s, t.wall);
  const double outside = std::max(0.0, all - t.windows - t.warmup);
  const double startup = std::max(0.0, job.total_s - job.configurations_s);
  const double between = std::max(0.0, job.configurations_s - t.wall);
  char percent[32];
  std::snprintf(percent, sizeof percent, "%.1f%%", all > 0 ? 100 * outside / all : 0.0);
  std::string line = "time: " + seconds(all) + " in all; windows " + seconds(t.windows) + ", warm-up " +
                     seconds(t.warmup) + ", outside " + seconds(outside) + " (" + percent + "): start-up " +
                     seconds(startup) + ", setup " + seconds(t.setup) + ", first runs " + seconds(t.first_run) +
                     ", gaps between windows " + seconds(t.gaps);
  if (t.metering >= 0.005) line += ", energy metering " + seconds(t.metering);
  line += ", verification " + seconds(t.verification) + ", gather " + seconds(t.gather) + ", report " +
          seconds(t.report) + ", between configurations " + seconds(between);
  return line;
}

std::string time_by_kernel(const KernelTimings& configs) {
  std::vector<std::pair<std::string, Totals>> kernels;
  for (const auto& [kernel, timing] : configs) {
    auto it = std::find_if(kernels.begin(), kernels.end(), [&](const auto& k) { return k.first == kernel; });
    if (it == kernels.end()) it = kernels.insert(kernels.end(), {kernel, Totals{}});
    it->second.add(timing);
  }
  char line[200];
  std::snprintf(line, sizeof line, "%-10s %7s %9s %9s %9s %9s %9s %9s %9s %9s %9s\n", "kernel", "configs", "wall",
                "windows", "warm-up", "setup", "first", "gaps", "verify", "gather", "report");
  std::string out = line;
  for (const auto& [kernel, t] : kernels) {
    std::snprintf(line, sizeof line, "%-10s %7d %8.2fs %8.2fs %8.2fs %8.2fs %8.2fs %8.2fs %8.2fs %8.2fs %8.2fs\n",
                  kernel.c_str(), t.configs, t.wall, t.windows, t.warmup, t.setup, t.first_run, t.gaps,
                  t.verification, t.gather, t.report);
    out += line;
  }
  return out;
}

}  // namespace mpsb
