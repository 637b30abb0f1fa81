// How one instance runs a batch of iterations of its workload.
#pragma once

#include <cstdint>
#include <vector>

#include "measure/clock.hpp"
#include "measure/host_allreduce.hpp"
#include "workload.hpp"

namespace mpsb {

// One instance's iterations as its configuration defines them: a request
// kernel (per_iteration_latency) waits for each result and is timed on the
// host clock; --allreduce adds the host collective after each iteration.
struct IterationRunner {
  Workload& workload;
  bool per_request = false;
  HostAllreduce* allreduce = nullptr;
  std::vector<double> latencies;  // of the last run(), when per_request
  double collective_s = 0;        // of the last run()

  void run(std::int64_t count) {
    latencies.clear();
    collective_s = 0;
    if (!per_request && allreduce == nullptr) {
      for (std::int64_t i = 0; i < count; ++i) workload.run();
      return;
    }
    if (per_request) latencies.reserve(static_cast<std::size_t>(count));
    for (std::int64_t i = 0; i < count; ++i) {
      if (per_request) {
        const double start = now_seconds();
        workload.run();
        workload.sync();
        latencies.push_back(now_seconds() - start);
      } else {
        workload.run();
        workload.sync();  // the data-parallel step: results ready before they are reduced
      }
      if (allreduce != nullptr) collective_s += allreduce->reduce_and_check();
    }
  }
};

}  // namespace mpsb
