// The GPU counters through NVML, opened at run time (runtime/nvml_library.hpp
// says why). Only the header comes from the toolkit, and where the toolkit
// lacks it (a toolkit assembled from the pip wheels has no nvml.h) the few
// declarations used are given below, checked against the header wherever it
// exists. Every call's status is checked; a failure makes that one reading
// missing (or the figure unavailable, with NVML's reason), never an abort.
#include "telemetry/gpu_counters.hpp"

#include <algorithm>
#include <cmath>

#include "runtime/nvml_library.hpp"
#include "runtime/steady_clock.hpp"
#include "telemetry/fake_counters.hpp"

#if __has_include(<nvml.h>)
#include <nvml.h>
#define MPSB_HAVE_NVML_H 1
#else
// The subset of nvml.h used here, as the header declares it (C ABI: the enums
// are ints, a device and a GPM sample are opaque pointers). The GPM request
// holds more metric slots than any header has had (210 in CUDA 13's): NVML
// touches only the first numMetrics.
extern "C" {
typedef enum nvmlReturn_enum : int { NVML_SUCCESS = 0 } nvmlReturn_t;
typedef struct nvmlDevice_st* nvmlDevice_t;
typedef enum nvmlClockType_enum : int { NVML_CLOCK_SM = 1 } nvmlClockType_t;
typedef struct nvmlGpmSample_st* nvmlGpmSample_t;
typedef struct {
  unsigned int metricId;
  nvmlReturn_t nvmlReturn;
  double value;
  struct {
    char* shortName;
    char* longName;
    char* unit;
  } metricInfo;
} nvmlGpmMetric_t;
typedef struct {
  unsigned int version;
  unsigned int numMetrics;
  nvmlGpmSample_t sample1;
  nvmlGpmSample_t sample2;
  nvmlGpmMetric_t metrics[333];
} nvmlGpmMetricsGet_t;
typedef struct {
  unsigned int version;
  unsigned int isSupportedDevice;
} nvmlGpmSupport_t;
enum {
  NVML_GPM_METRIC_SM_UTIL = 2,
  NVML_GPM_METRIC_SM_OCCUPANCY = 3,
  NVML_GPM_METRIC_ANY_TENSOR_UTIL = 5,
  NVML_GPM_METRIC_DRAM_BW_UTIL = 10
};
#define NVML_GPM_METRICS_GET_VERSION 1
#define NVML_GPM_SUPPORT_VERSION 1
}
#endif

namespace mpsb {
namespace {

static_assert(NVML_SUCCESS == 0 && NVML_CLOCK_SM == 1, "nvml.h disagrees with the fallback declarations");
#ifdef MPSB_HAVE_NVML_H
// The event reason bits measure/throttle.hpp names (clock_event::), as nvml.h defines them.
static_assert(nvmlClocksEventReasonGpuIdle == 0x1 && nvmlClocksEventReasonApplicationsClocksSetting == 0x2 &&
                  nvmlClocksEventReasonSwPowerCap == 0x4 && nvmlClocksThrottleReasonHwSlowdown == 0x8 &&
                  nvmlClocksEventReasonSyncBoost == 0x10 && nvmlClocksEventReasonSwThermalSlowdown == 0x20 &&
                  nvmlClocksThrottleReasonHwThermalSlowdown == 0x40 &&
                  nvmlClocksThrottleReasonHwPowerBrakeSlowdown == 0x80 &&
                  nvmlClocksEventReasonDisplayClockSetting == 0x100,
              "nvml.h event reason bits differ from measure/throttle.hpp");
#endif
static_assert(NVML_GPM_METRIC_SM_UTIL == 2 && NVML_GPM_METRIC_SM_OCCUPANCY == 3 &&
                  NVML_GPM_METRIC_ANY_TENSOR_UTIL == 5 && NVML_GPM_METRIC_DRAM_BW_UTIL == 10 &&
                  NVML_GPM_METRICS_GET_VERSION == 1 && NVML_GPM_SUPPORT_VERSION == 1,
              "nvml.h's GPM metric ids or versions differ from the fallback declarations");

// The NVML entry points, resolved once per process. The first group is required (the clock watch has
// always needed it); energy and GPM are optional: a driver without them leaves those figures unavailable.
struct Nvml {
  nvmlReturn_t (*init)() = nullptr;
  const char* (*error_string)(nvmlReturn_t) = nullptr;
  nvmlReturn_t (*handle_by_uuid)(const char*, nvmlDevice_t*) = nullptr;
  nvmlReturn_t (*clock_info)(nvmlDevice_t, nvmlClockType_t, unsigned int*) = nullptr;
  nvmlReturn_t (*max_clock_info)(nvmlDevice_t, nvmlClockType_t, unsigned int*) = nullptr;
  nvmlReturn_t (*event_reasons)(nvmlDevice_t, unsigned long long*) = nullptr;
  nvmlReturn_t (*count)(unsigned int*) = nullptr;
  nvmlReturn_t (*handle_by_index)(unsigned int, nvmlDevice_t*) = nullptr;
  nvmlReturn_t (*device_uuid)(nvmlDevice_t, char*, unsigned int) = nullptr;
  nvmlReturn_t (*total_energy)(nvmlDevice_t, unsigned long long*) = nullptr;
  nvmlReturn_t (*gpm_support)(nvmlDevice_t, nvmlGpmSupport_t*) = nullptr;
  nvmlReturn_t (*gpm_alloc)(nvmlGpmSample_t*) = nullptr;
  nvmlReturn_t (*gpm_free)(nvmlGpmSample_t) = nullptr;
  nvmlReturn_t (*gpm_get)(nvmlDevice_t, nvmlGpmSample_t) = nullptr;
  nvmlReturn_t (*gpm_metrics)(nvmlGpmMetricsGet_t*) = nullptr;
  std::string problem;  // non-empty: NVML cannot be used

  std::string error(nvmlReturn_t status) const {
    const char* text = error_string ? error_string(status) : nullptr;
    return (text ? std::string(text) : std::string("NVML error")) + " (" + std::to_string(static_cast<int>(status)) +
           ")";
  }
  bool has_gpm() const { return gpm_support && gpm_alloc && gpm_free && gpm_get && gpm_metrics; }
};

using nvml_library::resolve;

Nvml load_nvml() {
  Nvml api;
  void* library = nvml_library::open(api.problem);  // runtime/nvml_library.hpp: never closed
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
  resolve(library, "nvmlDeviceGetCount_v2", api.count);
  resolve(library, "nvmlDeviceGetHandleByIndex_v2", api.handle_by_index);
  resolve(library, "nvmlDeviceGetUUID", api.device_uuid);
  resolve(library, "nvmlDeviceGetTotalEnergyConsumption", api.total_energy);
  resolve(library, "nvmlGpmQueryDeviceSupport", api.gpm_support);
  resolve(library, "nvmlGpmSampleAlloc", api.gpm_alloc);
  resolve(library, "nvmlGpmSampleFree", api.gpm_free);
  resolve(library, "nvmlGpmSampleGet", api.gpm_get);
  resolve(library, "nvmlGpmMetricsGet", api.gpm_metrics);
  if (const nvmlReturn_t status = api.init(); status != NVML_SUCCESS) {
    api.problem = "nvmlInit_v2 failed: " + api.error(status);
  }
  return api;
}

const Nvml& nvml() {
  static const Nvml api = load_nvml();  // thread-safe initialization, once per process
  return api;
}

class NvmlGpmSample final : public GpmSample {
 public:
  explicit NvmlGpmSample(nvmlGpmSample_t sample) : sample_(sample) {}
  ~NvmlGpmSample() override { static_cast<void>(nvml().gpm_free(sample_)); }  // nothing to do about a failure
  NvmlGpmSample(const NvmlGpmSample&) = delete;
  NvmlGpmSample& operator=(const NvmlGpmSample&) = delete;
  nvmlGpmSample_t get() const { return sample_; }

 private:
  nvmlGpmSample_t sample_;
};

class NvmlCounters final : public GpuCounters {
 public:
  NvmlCounters(std::string uuid, nvmlDevice_t device) : uuid_(std::move(uuid)), device_(device) {
    const Nvml& api = nvml();
    // One reading each now, so that an unsupported counter or a missing permission is known (and
    // recorded as the reason) before any measurement.
    unsigned long long mj = 0;
    if (api.total_energy == nullptr) {
      energy_problem_ = "NVML lacks nvmlDeviceGetTotalEnergyConsumption (driver too old)";
    } else if (const nvmlReturn_t status = api.total_energy(device_, &mj); status != NVML_SUCCESS) {
      energy_problem_ = "nvmlDeviceGetTotalEnergyConsumption: " + api.error(status);
    }
    gpm_problem_ = gpm_check();
  }

  const std::string& uuid() const override { return uuid_; }

  std::optional<double> max_sm_clock_mhz(std::string& note) override {
    const Nvml& api = nvml();
    unsigned int mhz = 0;
    const nvmlReturn_t status = api.max_clock_info(device_, NVML_CLOCK_SM, &mhz);
    if (status == NVML_SUCCESS && mhz > 0) return static_cast<double>(mhz);
    note = "no reference clock (nvmlDeviceGetMaxClockInfo: " +
           (status != NVML_SUCCESS ? api.error(status) : std::string("0 MHz")) + "): only clock events count";
    return std::nullopt;
  }
  bool sm_clock_mhz(unsigned& mhz) override {
    unsigned int value = 0;
    if (nvml().clock_info(device_, NVML_CLOCK_SM, &value) != NVML_SUCCESS) return false;
    mhz = value;
    return true;
  }
  bool event_reasons(std::uint64_t& bits) override {
    unsigned long long value = 0;
    if (nvml().event_reasons(device_, &value) != NVML_SUCCESS) return false;
    bits = value;
    return true;
  }
  const std::string& energy_problem() const override { return energy_problem_; }
  bool energy_mj(std::uint64_t& mj) override {
    if (!energy_problem_.empty()) return false;
    unsigned long long value = 0;
    if (nvml().total_energy(device_, &value) != NVML_SUCCESS) return false;
    mj = value;
    return true;
  }
  const std::string& gpm_problem() const override { return gpm_problem_; }
  std::unique_ptr<GpmSample> gpm_sample(std::string& why) override {
    if (!gpm_problem_.empty()) {
      why = gpm_problem_;
      return nullptr;
    }
    return take_sample(why);
  }

 protected:
  GpmFigures read_gpm_figures(const GpmSample& first, const GpmSample& second, std::string& why) override;

 private:
  std::unique_ptr<GpmSample> take_sample(std::string& why) {
    const Nvml& api = nvml();
    nvmlGpmSample_t raw = nullptr;
    if (const nvmlReturn_t status = api.gpm_alloc(&raw); status != NVML_SUCCESS) {
      why = "nvmlGpmSampleAlloc: " + api.error(status);
      return nullptr;
    }
    auto sample = std::make_unique<NvmlGpmSample>(raw);  // frees it whatever happens next
    if (const nvmlReturn_t status = api.gpm_get(device_, raw); status != NVML_SUCCESS) {
      why = "nvmlGpmSampleGet: " + api.error(status);
      return nullptr;
    }
    sample->time_s = now_seconds();
    return sample;
  }

  std::string gpm_check() {
    const Nvml& api = nvml();
    if (uuid_.rfind("MIG-", 0) == 0) return "a MIG device (mpsbench reads GPM of whole GPUs only)";
    if (!api.has_gpm()) return "NVML lacks GPM (nvmlGpmSampleGet; driver before R520)";
    nvmlGpmSupport_t support{};
    support.version = NVML_GPM_SUPPORT_VERSION;
    if (const nvmlReturn_t status = api.gpm_support(device_, &support); status != NVML_SUCCESS) {
      return "nvmlGpmQueryDeviceSupport: " + api.error(status);
    }
    if (support.isSupportedDevice == 0) return "GPM not supported on this GPU (Hopper or newer needed)";
    std::string why;
    if (!take_sample(why)) return why;  // a container without the permission fails here, not mid-run
    return "";
  }

  std::string uuid_;
  nvmlDevice_t device_;
  std::string energy_problem_, gpm_problem_;
};

GpmFigures NvmlCounters::read_gpm_figures(const GpmSample& first, const GpmSample& second, std::string& why) {
  const Nvml& api = nvml();
  GpmFigures figures;
  const auto* a = dynamic_cast<const NvmlGpmSample*>(&first);
  const auto* b = dynamic_cast<const NvmlGpmSample*>(&second);
  if (a == nullptr || b == nullptr) {
    why = "GPM samples of another source";
    return figures;
  }
  // About 10 KiB: on the heap, zeroed (make_unique value-initializes).
  auto request = std::make_unique<nvmlGpmMetricsGet_t>();
  request->version = NVML_GPM_METRICS_GET_VERSION;
  request->sample1 = a->get();
  request->sample2 = b->get();
  const unsigned int ids[4] = {NVML_GPM_METRIC_SM_UTIL, NVML_GPM_METRIC_SM_OCCUPANCY, NVML_GPM_METRIC_DRAM_BW_UTIL,
                               NVML_GPM_METRIC_ANY_TENSOR_UTIL};
  request->numMetrics = 4;
  for (unsigned int i = 0; i < 4; ++i) request->metrics[i].metricId = ids[i];
  if (const nvmlReturn_t status = api.gpm_metrics(request.get()); status != NVML_SUCCESS) {
    why = "nvmlGpmMetricsGet: " + api.error(status);
    return figures;
  }
  std::optional<double>* slots[4] = {&figures.sm_active, &figures.sm_occupancy, &figures.dram_bw,
                                     &figures.tensor_active};
  for (unsigned int i = 0; i < 4; ++i) {
    const nvmlGpmMetric_t& m = request->metrics[i];
    if (m.nvmlReturn == NVML_SUCCESS && std::isfinite(m.value)) {
      *slots[i] = m.value;
    } else {
      why += (why.empty() ? "" : "; ") + std::string("GPM metric ") + std::to_string(ids[i]) + ": " +
             (m.nvmlReturn != NVML_SUCCESS ? api.error(m.nvmlReturn) : std::string("not a number"));
    }
  }
  return figures;
}

}  // namespace

std::unique_ptr<GpuCounters> open_gpu_counters(const std::string& uuid, std::string& problem) {
  const FakeNvmlFile& file = fake_nvml_from_environment();
  if (file.set) {
    if (!file.fake) {
      problem = file.problem;
      return nullptr;
    }
    for (const auto& g : file.fake->gpus) {
      if (g.uuid == uuid) return make_fake_counters(g);
    }
    problem = "MPSBENCH_FAKE_NVML lists no GPU " + uuid;
    return nullptr;
  }
  const Nvml& api = nvml();
  if (!api.problem.empty()) {
    problem = api.problem;
    return nullptr;
  }
  nvmlDevice_t device = nullptr;
  if (const nvmlReturn_t status = api.handle_by_uuid(uuid.c_str(), &device); status != NVML_SUCCESS) {
    problem = "nvmlDeviceGetHandleByUUID(" + uuid + ") failed: " + api.error(status);
    return nullptr;
  }
  return std::make_unique<NvmlCounters>(uuid, device);
}

std::vector<CounterGpu> list_counter_gpus(std::string& problem) {
  std::vector<CounterGpu> gpus;
  const FakeNvmlFile& file = fake_nvml_from_environment();
  if (file.set) {
    if (!file.fake) problem = file.problem;
    if (file.fake) {
      for (const auto& g : file.fake->gpus) gpus.push_back({g.index, g.uuid});
    }
    return gpus;
  }
  const Nvml& api = nvml();
  if (!api.problem.empty()) {
    problem = api.problem;
    return gpus;
  }
  if (!api.count || !api.handle_by_index || !api.device_uuid) {
    problem = "NVML too old: it cannot list GPUs (nvmlDeviceGetCount_v2)";
    return gpus;
  }
  unsigned int count = 0;
  if (const nvmlReturn_t status = api.count(&count); status != NVML_SUCCESS) {
    problem = "nvmlDeviceGetCount_v2: " + api.error(status);
    return gpus;
  }
  for (unsigned int i = 0; i < count; ++i) {
    nvmlDevice_t device = nullptr;
    char text[96] = {};
    nvmlReturn_t status = api.handle_by_index(i, &device);
    if (status == NVML_SUCCESS) status = api.device_uuid(device, text, sizeof text);
    if (status != NVML_SUCCESS) {
      problem = "GPU " + std::to_string(i) + ": " + api.error(status);
      gpus.clear();
      return gpus;
    }
    gpus.push_back({static_cast<int>(i), text});
  }
  if (gpus.empty()) problem = "NVML lists no GPU";
  return gpus;
}

std::optional<std::string> fake_gpu_for_cpu_device() {
  const FakeNvmlFile& file = fake_nvml_from_environment();
  if (!file.fake) return std::nullopt;
  return file.fake->cpu_device_as;
}

}  // namespace mpsb
