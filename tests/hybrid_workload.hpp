// The hybrid kernel's workload as the tests make it, from the registry as the harness does: on the CPU
// device, or on GPU 0 with the test's stream (shared by the hybrid and host-array-layout tests).
#pragma once

#include <cstdint>
#include <memory>
#include <string>

#include "registry.hpp"

namespace mpsb {

inline std::unique_ptr<Workload> make_hybrid(DeviceKind device, const std::string& precision, std::int64_t size,
                                             cudaStream_t stream = nullptr) {
  WorkloadArgs args;
  args.device = device;
  args.gpu_ordinal = device == DeviceKind::gpu ? 0 : -1;
  args.stream = stream;
  args.precision = precision;
  args.size = size;
  return find_kernel("hybrid")->make(args);
}

}  // namespace mpsb
