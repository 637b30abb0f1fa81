#include "telemetry/gpu_monitor.hpp"

#include <algorithm>
#include <chrono>

#include "runtime/cpu_affinity.hpp"
#include "runtime/steady_clock.hpp"

namespace mpsb {

GpuMonitor::GpuMonitor(std::unique_ptr<GpuCounters> counters)
    : counters_(std::move(counters)), energy_(counters_->energy_problem().empty()), thread_([this] { run(); }) {}

GpuMonitor::~GpuMonitor() {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    stopping_ = true;
  }
  wake_.notify_all();
  thread_.join();
}

void GpuMonitor::resume() {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    active_ = true;
  }
  wake_.notify_all();
}

void GpuMonitor::pause() {
  std::unique_lock<std::mutex> lock(mutex_);
  active_ = false;
  wake_.notify_all();
  wake_.wait(lock, [this] { return !busy_; });
}

void GpuMonitor::forget_before(double time_s) {
  std::lock_guard<std::mutex> lock(mutex_);
  while (!clocks_.empty() && clocks_.front().time_s < time_s) clocks_.pop_front();
  while (!reads_.empty() && reads_.front().begin_s < time_s) reads_.pop_front();
}

std::vector<ClockSample> GpuMonitor::clock_samples(double from, double to) const {
  std::lock_guard<std::mutex> lock(mutex_);
  std::vector<ClockSample> out;
  for (const auto& s : clocks_) {
    if (s.time_s >= from && s.time_s <= to) out.push_back(s);
  }
  return out;
}

std::optional<ClockSample> GpuMonitor::clock_sample_before(double time_s) const {
  std::lock_guard<std::mutex> lock(mutex_);
  std::optional<ClockSample> latest;
  for (const auto& s : clocks_) {
    if (s.time_s >= time_s) break;
    latest = s;
  }
  return latest;
}

std::vector<CounterRead> GpuMonitor::energy_reads(double from, double to) const {
  std::lock_guard<std::mutex> lock(mutex_);
  std::vector<CounterRead> out;
  for (const auto& r : reads_) {
    if (r.begin_s >= from && r.end_s <= to) out.push_back(r);
  }
  return out;
}

void GpuMonitor::read_energy() {
  CounterRead read;
  read.begin_s = now_seconds();
  const bool ok = counters_->energy_mj(read.mj);
  read.end_s = now_seconds();
  if (!ok) return;  // a missing read only widens the next edge's bracket
  std::lock_guard<std::mutex> lock(mutex_);
  reads_.push_back(read);
  if (reads_.size() > kMaxEntries) reads_.pop_front();
}

// One round: energy, clock, energy, reasons (the counter read every other call, so its updates are
// bracketed tightly), or without the counter clock and reasons and a pause, as the old sampler did.
void GpuMonitor::run() {
  // Off the timed rank's core: its reads are back to back, and on that core they slowed the first rank's
  // launches and made its small windows noisy (issue 28). Where the node has no other CPU, it stays.
  leave_bound_cpus();
  std::unique_lock<std::mutex> lock(mutex_);
  while (true) {
    wake_.wait(lock, [this] { return stopping_ || active_; });
    if (stopping_) return;
    busy_ = true;
    lock.unlock();
    if (energy_) read_energy();
    ClockSample sample;
    const double begin = now_seconds();
    unsigned mhz = 0;
    sample.clock_ok = counters_->sm_clock_mhz(mhz);
    sample.mhz = static_cast<double>(mhz);
    if (energy_) read_energy();
    sample.reasons_ok = counters_->event_reasons(sample.reasons);
    sample.time_s = 0.5 * (begin + now_seconds());
    lock.lock();
    clocks_.push_back(sample);
    if (clocks_.size() > kMaxEntries) clocks_.pop_front();
    busy_ = false;
    wake_.notify_all();
    const int sleep_ms = energy_ ? kRoundSleepMs : kClockOnlySleepMs;
    wake_.wait_for(lock, std::chrono::milliseconds(sleep_ms), [this] { return stopping_ || !active_; });
  }
}

}  // namespace mpsb
