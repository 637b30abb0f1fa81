#include "measure/cpu_watch.hpp"

#include <unistd.h>

#include <algorithm>

#include "sharing/mps_servers.hpp"

namespace mpsb {

bool cpu_slowed(double probe_ratio, double threshold) { return probe_ratio > 1 + threshold; }

double injected_probe_ratio(double threshold) { return 2 * (1 + threshold); }

CpuWatch::CpuWatch(std::string proc_root) : proc_root_(std::move(proc_root)), ticks_per_second_(sysconf(_SC_CLK_TCK)) {}

void CpuWatch::before(int load) {
  if (!probe_) probe_ = std::make_unique<CpuProbe>();
  auto found = references_.find(load);
  if (found == references_.end()) {
    double fastest = probe_->seconds();
    for (int i = 1; i < kCalibrationProbes; ++i) fastest = std::min(fastest, probe_->seconds());
    found = references_.emplace(load, fastest).first;
  }
  reference_s_ = &found->second;
  before_counters_ = read_cpu_counters(proc_root_);
  before_s_ = probe_->seconds();
}

CpuReading CpuWatch::after() {
  const double after_s = probe_->seconds();
  const CpuCounterSnapshot after_counters = read_cpu_counters(proc_root_);
  const double probe_s = std::min(before_s_, after_s);
  *reference_s_ = std::min(*reference_s_, probe_s);
  CpuReading r;
  r.ratio = *reference_s_ > 0 ? probe_s / *reference_s_ : 1;  // a clock too coarse to time it: no verdict
  const CpuLoss loss = cpu_loss_between(before_counters_, after_counters, ticks_per_second_);
  r.steal_s = loss.steal_s;
  r.run_delay_s = loss.run_delay_s;
  if (!loss.problem.empty() && note_.find(loss.problem) == std::string::npos) {
    note_ += (note_.empty() ? "" : "; ") + loss.problem;
  }
  return r;
}

std::optional<double> CpuWatch::reference_s() const {
  if (reference_s_ == nullptr) return std::nullopt;
  return *reference_s_;
}

void CpuWatches::prepare(int instances) {
  while (watches_.size() < static_cast<std::size_t>(instances)) {
    watches_.push_back(std::make_unique<CpuWatch>(proc_root_from_environment()));
  }
}

}  // namespace mpsb
