// Which device mpsbench-micro measures, decided once before any benchmark is
// registered, and recorded in Google Benchmark's context so every console and
// JSON report says what it was measured on.
#pragma once

#include <string>

#include "micro_options.hpp"
#include "workload.hpp"

namespace mpsb::micro {

struct DeviceInUse {
  DeviceKind kind = DeviceKind::cpu;
  int gpu_ordinal = -1;
  std::string gpu_name;
  int sm_count = 0;       // as this process sees it (lower under an MPS thread limit)
  bool mps_enabled = false;
  std::string note;       // why the CPU was chosen
};

// GPU 0 when one is usable (and not --device=cpu); throws UsageError for
// --device=gpu without a usable GPU.
DeviceInUse choose_device(DeviceRequest request);

// benchmark::AddCustomContext entries: mpsbench_device, and the GPU's name,
// SM count and MPS state, or why the CPU was used.
void add_device_context(const DeviceInUse& device);

}  // namespace mpsb::micro
