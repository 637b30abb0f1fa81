// Scripted GPU counters for tests (MPSBENCH_FAKE_NVML=FILE.json), so that the
// monitor, the energy and GPM figures, mpsbench's records and mpsbench-meter
// can be checked on a machine without a GPU, against exact known values:
//
//   {"gpus": [{"uuid": "GPU-fake-0", "index": 0,
//              "power_w": 250, "tick_s": 0.1,          energy counter: power_w x time in mJ, updated at every
//                                                       multiple of tick_s of the steady clock (as NVML's, about
//                                                       every 100 ms)
//              "energy": "ok",                          or "not_supported", "no_permission"
//              "sm_clock_mhz": 1980, "max_sm_clock_mhz": 1980, "event_reasons": 0,
//              "gpm": {"sm_active": 80, "sm_occupancy": 40, "dram_bw": 30, "tensor_active": 10},
//                                                       or "not_supported", "no_permission"; any number, so a
//                                                       broken counter (250, -3) can be scripted
//              "call_s": 0.004}],                       every read takes this long (NVML's ~4 ms); default 0
//    "cpu_device_as": "GPU-fake-0"}                     optional: mpsbench --device cpu meters this GPU as if
//                                                       the ranks ran on it (end-to-end tests of the records)
//
// Every field but "uuid" has the default shown (index: the position).
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "telemetry/gpu_counters.hpp"

namespace mpsb {

struct FakeGpu {
  std::string uuid;
  int index = 0;
  double power_w = 250;
  double tick_s = 0.1;
  std::string energy = "ok";
  double sm_clock_mhz = 1980, max_sm_clock_mhz = 1980;  // at its maximum: never throttled
  std::uint64_t event_reasons = 0;
  std::string gpm = "ok";  // "ok" with the figures, or the failure to fake
  GpmFigures figures{80.0, 40.0, 30.0, 10.0};
  double call_s = 0;

  // The counter's value at steady time t: power_w x (t rounded down to a tick) in mJ, so that between
  // two ticks k apart it grows by exactly k x power_w x tick_s x 1000.
  std::uint64_t energy_mj_at(double t) const;
};

struct FakeNvml {
  std::vector<FakeGpu> gpus;
  std::optional<std::string> cpu_device_as;
};

// The injected form above; throws std::exception naming what is wrong.
FakeNvml parse_fake_nvml(const std::string& json_text);
// MPSBENCH_FAKE_NVML's file, read once per process: nullopt when the variable is unset or empty; a
// `problem` (unreadable, malformed) leaves every GPU unopenable with that reason.
struct FakeNvmlFile {
  std::optional<FakeNvml> fake;
  std::string problem;
  bool set = false;
};
const FakeNvmlFile& fake_nvml_from_environment();

// The counters of one fake GPU.
std::unique_ptr<GpuCounters> make_fake_counters(const FakeGpu& gpu);

}  // namespace mpsb
