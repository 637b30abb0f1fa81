// Google Benchmark registrations for the kernels of the registry: one per
// kernel x precision, the sizes as Args. Knows no kernel by name.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include <benchmark/benchmark.h>
#include <cuda_runtime_api.h>

#include "micro_options.hpp"
#include "workload.hpp"

namespace mpsb::micro {

struct Target {
  DeviceKind device = DeviceKind::cpu;
  int gpu_ordinal = -1;
  cudaStream_t stream = nullptr;  // owned by the caller; outlives the benchmarks
};

// Sizes one kernel is benchmarked at: --sizes=KERNEL=LIST, else --sizes=LIST,
// else the kernel's defaults for the device. Throws UsageError for a size
// above the kernel's maximum.
std::vector<std::int64_t> benchmark_sizes(const KernelInfo& kernel, const MicroOptions& opt, DeviceKind device);

class KernelBenchmarks {
 public:
  explicit KernelBenchmarks(Target target) : target_(target) {}
  KernelBenchmarks(const KernelBenchmarks&) = delete;
  KernelBenchmarks& operator=(const KernelBenchmarks&) = delete;

  // Registers every kernel x precision; the registrations refer to *this.
  // Returns how many were registered.
  int register_all(const MicroOptions& opt);
  // Frees the last benchmark's workload; call before the stream is destroyed.
  void release() { cache_ = Cached{}; }
  // Whether any benchmark ended in SkipWithError.
  bool any_failed() const { return failed_; }

 private:
  // Google Benchmark calls a benchmark's function several times (growing the
  // iteration count, then once per repetition); the workload stays set up
  // across those calls, so setup() runs once per benchmark.
  struct Cached {
    std::string kernel, precision;
    std::int64_t size = 0;
    std::unique_ptr<Workload> workload;
  };

  void run(benchmark::State& state, const KernelInfo& kernel, const std::string& precision);
  Workload& workload_for(const KernelInfo& kernel, const std::string& precision, std::int64_t size);
  void time_iterations(benchmark::State& state, Workload& workload);
  void fail(benchmark::State& state, const std::string& why);

  Target target_;
  Cached cache_;
  bool failed_ = false;
};

}  // namespace mpsb::micro
