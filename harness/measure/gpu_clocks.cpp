// NVML is opened at run time (sharing/nvml_library.hpp says why). Only the
// header comes from the toolkit, and where the toolkit lacks it (a toolkit
// assembled from the pip wheels has no nvml.h) the few declarations used are
// given below, checked against the header wherever it exists.
#include "measure/gpu_clocks.hpp"

#include "sharing/nvml_library.hpp"

#include <algorithm>
#include <chrono>

#if __has_include(<nvml.h>)
#include <nvml.h>
#define MPSB_HAVE_NVML_H 1
#else
// The subset of nvml.h this file uses, as the header declares it (C ABI: the
// enums are ints, a device is an opaque pointer).
extern "C" {
typedef enum nvmlReturn_enum { NVML_SUCCESS = 0 } nvmlReturn_t;
typedef struct nvmlDevice_st* nvmlDevice_t;
typedef enum nvmlClockType_enum { NVML_CLOCK_SM = 1 } nvmlClockType_t;
}
#endif

namespace mpsb {
namespace {

#ifdef MPSB_HAVE_NVML_H
static_assert(NVML_CLOCK_SM == 1 && NVML_SUCCESS == 0, "nvml.h disagrees with the fallback declarations");
static_assert(nvmlClocksEventReasonGpuIdle == clock_event::kGpuIdle &&
                  nvmlClocksEventReasonApplicationsClocksSetting == clock_event::kApplicationsClocks &&
                  nvmlClocksEventReasonSwPowerCap == clock_event::kSwPowerCap &&
                  nvmlClocksThrottleReasonHwSlowdown == clock_event::kHwSlowdown &&
                  nvmlClocksEventReasonSyncBoost == clock_event::kSyncBoost &&
                  nvmlClocksEventReasonSwThermalSlowdown == clock_event::kSwThermal &&
                  nvmlClocksThrottleReasonHwThermalSlowdown == clock_event::kHwThermal &&
                  nvmlClocksThrottleReasonHwPowerBrakeSlowdown == clock_event::kHwPowerBrake &&
                  nvmlClocksEventReasonDisplayClockSetting == clock_event::kDisplayClock,
              "nvml.h event reason bits differ from throttle.hpp");
#endif

// The NVML entry points, resolved once per process.
struct Nvml {
  nvmlReturn_t (*init)() = nullptr;
  const char* (*error_string)(nvmlReturn_t) = nullptr;
  nvmlReturn_t (*handle_by_uuid)(const char*, nvmlDevice_t*) = nullptr;
  nvmlReturn_t (*clock_info)(nvmlDevice_t, nvmlClockType_t, unsigned int*) = nullptr;
  nvmlReturn_t (*max_clock_info)(nvmlDevice_t, nvmlClockType_t, unsigned int*) = nullptr;
  nvmlReturn_t (*event_reasons)(nvmlDevice_t, unsigned long long*) = nullptr;
  std::string problem;  // non-empty: NVML cannot be used

  std::string error(nvmlReturn_t status) const {
    const char* text = error_string ? error_string(status) : nullptr;
    return (text ? std::string(text) : std::string("NVML error")) + " (" + std::to_string(static_cast<int>(status)) +
           ")";
  }
};

using nvml_library::resolve;

Nvml load_nvml() {
  Nvml api;
  void* library = nvml_library::open(api.problem);  // sharing/nvml_library.hpp: never closed
  if (library == nullptr) return api;
  resolve(library, "nvmlErrorString", api.error_string);
  // Drivers before the 535 series name the reasons call "...ThrottleReasons".
  const bool reasons = resolve(library, "nvmlDeviceGetCurrentClocksEventReasons", api.event_reasons) ||
                       resolve(library, "nvmlDeviceGetCurrentClocksThrottleReasons", api.event_reasons);
  if (!resolve(library, "nvmlInit_v2", api.init) ||
      !resolve(library, "nvmlDeviceGetHandleByUUID", api.handle_by_uuid) ||
      !resolve(library, "nvmlDeviceGetClockInfo", api.clock_info) ||
      !resolve(library, "nvmlDeviceGetMaxClockInfo", api.max_clock_info) || !reasons) {
    api.problem = "NVML too old: libnvidia-ml.so.1 lacks a function mpsbench uses";
    return api;
  }
  if (const nvmlReturn_t status = api.init(); status != NVML_SUCCESS) {
    api.problem = "nvmlInit_v2 failed: " + api.error(status);
  }
  return api;
}

const Nvml& nvml() {
  static const Nvml api = load_nvml();  // thread-safe initialization, once per process
  return api;
}

nvmlDevice_t as_device(void* device) { return static_cast<nvmlDevice_t>(device); }

}  // namespace

ClockSampler::ClockSampler(const std::string& gpu_uuid) {
  const Nvml& api = nvml();
  if (!api.problem.empty()) {
    note_ = api.problem;
    return;
  }
  nvmlDevice_t device = nullptr;
  if (const nvmlReturn_t status = api.handle_by_uuid(gpu_uuid.c_str(), &device); status != NVML_SUCCESS) {
    note_ = "nvmlDeviceGetHandleByUUID(" + gpu_uuid + ") failed: " + api.error(status);
    return;
  }
  device_ = device;
  unsigned int max_mhz = 0;
  if (const nvmlReturn_t status = api.max_clock_info(device, NVML_CLOCK_SM, &max_mhz);
      status != NVML_SUCCESS || max_mhz == 0) {
    note_ = "no reference clock (nvmlDeviceGetMaxClockInfo: " +
            (status != NVML_SUCCESS ? api.error(status) : std::string("0 MHz")) + "): only clock events count";
  } else {
    reference_mhz_ = static_cast<double>(max_mhz);
  }
}

ClockSampler::~ClockSampler() {
  if (thread_.joinable()) static_cast<void>(stop());
}

void ClockSampler::reset() {
  std::lock_guard<std::mutex> lock(mutex_);
  stopping_ = false;
  samples_ = missing_ = busy_ = 0;
  busy_sum_ = busy_min_ = busy_max_ = 0;
  events_ = 0;
}

void ClockSampler::take_sample() {
  const Nvml& api = nvml();
  unsigned int mhz = 0;
  unsigned long long reasons = 0;
  // Two quick driver queries; a failure marks the sample missing, never
  // aborts: the measurement is worth more than one clock reading.
  const bool clock_ok = api.clock_info(as_device(device_), NVML_CLOCK_SM, &mhz) == NVML_SUCCESS;
  const bool reasons_ok = api.event_reasons(as_device(device_), &reasons) == NVML_SUCCESS;
  std::lock_guard<std::mutex> lock(mutex_);
  if (!clock_ok || !reasons_ok) ++missing_;
  if (reasons_ok) events_ |= reasons;
  if (!clock_ok) return;
  ++samples_;
  // An idle GPU drops its clock: that says nothing about the work's speed.
  if (reasons_ok && (reasons & clock_event::kGpuIdle) != 0) return;
  const double value = static_cast<double>(mhz);
  busy_min_ = busy_ == 0 ? value : std::min(busy_min_, value);
  busy_max_ = busy_ == 0 ? value : std::max(busy_max_, value);
  busy_sum_ += value;
  ++busy_;
}

void ClockSampler::start() {
  if (!available()) return;
  if (thread_.joinable()) static_cast<void>(stop());
  reset();
  take_sample();
  thread_ = std::thread([this] {
    std::unique_lock<std::mutex> lock(mutex_);
    while (!wake_.wait_for(lock, std::chrono::milliseconds(kPeriodMs), [this] { return stopping_; })) {
      lock.unlock();
      take_sample();
      lock.lock();
    }
  });
}

ClockWindow ClockSampler::stop() {
  ClockWindow window;
  if (!available() || !thread_.joinable()) return window;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    stopping_ = true;
  }
  wake_.notify_all();
  thread_.join();
  take_sample();
  std::lock_guard<std::mutex> lock(mutex_);
  window.samples = samples_;
  window.missing = missing_;
  window.events = events_;
  if (busy_ > 0) {
    window.mean_mhz = busy_sum_ / busy_;
    window.min_mhz = busy_min_;
    window.max_mhz = busy_max_;
  }
  return window;
}

}  // namespace mpsb
