// SM clock and clock event reasons of one GPU during a timed window, through
// NVML, as nvbench watches for throttling. NVML is loaded at run time
// (dlopen), never linked: see gpu_clocks.cpp for why.
#pragma once

#include <condition_variable>
#include <mutex>
#include <optional>
#include <string>
#include <thread>

#include "measure/throttle.hpp"

namespace mpsb {

class ClockSampler {
 public:
  // Opens the GPU by its UUID ("GPU-..."). Never throws for NVML trouble: an
  // absent library, a failed init or an unknown UUID leave the sampler
  // unavailable, with note() saying why.
  explicit ClockSampler(const std::string& gpu_uuid);
  ~ClockSampler();
  ClockSampler(const ClockSampler&) = delete;
  ClockSampler& operator=(const ClockSampler&) = delete;

  bool available() const { return device_ != nullptr; }
  // Why the sampler is unavailable, or what it could not read; empty when all is well.
  const std::string& note() const { return note_; }
  // nvmlDeviceGetMaxClockInfo(NVML_CLOCK_SM), MHz; nullopt when unknown.
  std::optional<double> reference_mhz() const { return reference_mhz_; }

  // One sample now, then one every kPeriod on a background thread until stop(),
  // which takes one last sample and summarizes the window. No-ops (an empty
  // window) when unavailable. A failed NVML call marks its sample missing.
  void start();
  ClockWindow stop();

  static constexpr int kPeriodMs = 5;

 private:
  void take_sample();
  void reset();

  void* device_ = nullptr;  // nvmlDevice_t
  std::string note_;
  std::optional<double> reference_mhz_;

  std::thread thread_;
  std::mutex mutex_;
  std::condition_variable wake_;
  bool stopping_ = false;
  // Accumulated under mutex_ since start().
  int samples_ = 0, missing_ = 0, busy_ = 0;
  double busy_sum_ = 0, busy_min_ = 0, busy_max_ = 0;
  unsigned long long events_ = 0;
};

}  // namespace mpsb
