// Workloads kept from one configuration to the next (issue 28): the default
// plan runs each kernel, precision and size at 1, 2, 4 and 8 ranks per GPU in
// a row, and an instance (rank, instance index) runs the same workload with
// the same seed in each, so its stream, events, buffers, inputs and library
// handles are made once, not four times, and its first run (module loading,
// workspaces) is not repeated. Verification still checks every
// configuration's last repetition (its outputs are poisoned before it), and a
// kernel whose details accumulate over its runs restarts them
// (Workload::restart_details). Green contexts are per configuration: --mode
// green keeps nothing.
#pragma once

#include <memory>
#include <vector>

#include "measure/gpu_timer.hpp"
#include "measure/plan.hpp"
#include "workload.hpp"

namespace mpsb {

// The same workload: kernel, precision, size and parameters (the rank count may differ).
bool same_workload(const Config& a, const Config& b);

struct CachedInstance {
  Config config;  // what `workload` runs
  std::unique_ptr<GpuTimer> timer;  // declared before the workload: outlives it
  std::unique_ptr<Workload> workload;
};

class InstanceCache {
 public:
  // Before a configuration, on every rank, active or not, before any instance thread starts: drops every
  // kept instance whose workload differs from `own` (what this rank runs in it), freeing its memory
  // for the configurations to come, and makes room for `instances`.
  void prepare(const Config& own, int instances);
  // The instance's slot: filled when it holds a workload to reuse. Each thread uses its own.
  CachedInstance& slot(int instance) { return slots_[static_cast<std::size_t>(instance)]; }

 private:
  std::vector<CachedInstance> slots_;
};

}  // namespace mpsb
