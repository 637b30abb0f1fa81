// What one GPU's counters say, through NVML (nvml_counters.cpp, opened at run
// time: runtime/nvml_library.hpp) or, for tests, through a scripted fake
// (MPSBENCH_FAKE_NVML, fake_counters.hpp): the SM clock and its event
// reasons, the total energy counter, and GPU performance monitoring (GPM)
// samples with the four figures mpsbench reports. Every read says whether it
// worked; nothing here throws for NVML trouble, and nothing aborts.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace mpsb {

// GPM figures between two samples, in percent (0-100); nullopt where NVML gave none.
struct GpmFigures {
  std::optional<double> sm_active;      // NVML_GPM_METRIC_SM_UTIL: SMs busy
  std::optional<double> sm_occupancy;   // NVML_GPM_METRIC_SM_OCCUPANCY: warps resident of the maximum
  std::optional<double> dram_bw;        // NVML_GPM_METRIC_DRAM_BW_UTIL: DRAM bandwidth of the maximum
  std::optional<double> tensor_active;  // NVML_GPM_METRIC_ANY_TENSOR_UTIL: any tensor pipe busy
};

// One GPM sample of one GPU (nvmlGpmSampleGet), freed with it.
class GpmSample {
 public:
  virtual ~GpmSample() = default;
  double time_s = 0;  // now_seconds() when it was taken
};

class GpuCounters {
 public:
  virtual ~GpuCounters() = default;
  virtual const std::string& uuid() const = 0;
  // nvmlDeviceGetMaxClockInfo(SM), MHz; nullopt (with why in `note`) when unknown.
  virtual std::optional<double> max_sm_clock_mhz(std::string& note) = 0;
  // nvmlDeviceGetClockInfo(SM) and nvmlDeviceGetCurrentClocksEventReasons; false: not read.
  virtual bool sm_clock_mhz(unsigned& mhz) = 0;
  virtual bool event_reasons(std::uint64_t& bits) = 0;
  // Why the energy counter cannot be read (absent, not supported, no permission); empty: it can.
  virtual const std::string& energy_problem() const = 0;
  // nvmlDeviceGetTotalEnergyConsumption, mJ since the driver loaded; false: not read.
  virtual bool energy_mj(std::uint64_t& mj) = 0;
  // Why GPM cannot be used (a GPU before Hopper, a MIG device, no permission); empty: it can.
  virtual const std::string& gpm_problem() const = 0;
  // nullptr with `why` set when the sample could not be taken.
  virtual std::unique_ptr<GpmSample> gpm_sample(std::string& why) = 0;
  // The figures between two samples of this GPU (first taken first); `why` names any metric missing.
  // Checked here, for every source (gpm_check.cpp): a figure that is no percentage (outside 0-100, not
  // finite) comes from a broken counter, and as all four come from the same two samples, none is kept
  // then: every figure nullopt, `why` names the figure and its value. Not virtual, so no source skips it.
  GpmFigures gpm_figures(const GpmSample& first, const GpmSample& second, std::string& why);

 protected:
  // The figures as the source gives them, unchecked.
  virtual GpmFigures read_gpm_figures(const GpmSample& first, const GpmSample& second, std::string& why) = 0;
};

// Keeps `f` when every figure it has is a percentage (finite, 0-100); otherwise empties it and says why in
// `why` (appended). Returns whether it was kept.
bool check_gpm_figures(GpmFigures& f, std::string& why);

// The counters of the GPU with this UUID ("GPU-..."), or nullptr with `problem` saying why (NVML
// absent, an unknown UUID). MPSBENCH_FAKE_NVML=FILE.json makes them the fake's.
std::unique_ptr<GpuCounters> open_gpu_counters(const std::string& uuid, std::string& problem);

// The GPUs NVML (or the fake) lists, by NVML index (nvidia-smi's order).
struct CounterGpu {
  int index = 0;
  std::string uuid;
};
// Empty with `problem` set when none can be listed.
std::vector<CounterGpu> list_counter_gpus(std::string& problem);

// On the CPU device mpsbench meters no GPU, unless a test's fake names one to meter as if the ranks ran
// on it (MPSBENCH_FAKE_NVML's "cpu_device_as"): that UUID, else nullopt.
std::optional<std::string> fake_gpu_for_cpu_device();

}  // namespace mpsb
