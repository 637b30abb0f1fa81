#include "kernel_benchmark.hpp"

#include <chrono>
#include <cstdio>
#include <exception>
#include <stdexcept>

#include "cuda_check.hpp"
#include "registry.hpp"

namespace mpsb::micro {
namespace {

// The harness's default seed as rank 0 sees it: the same inputs as a
// one-rank mpsbench run, so the two measure the same data.
constexpr std::uint64_t kSeed = 1;

class EventPair {
 public:
  EventPair() {
    MPSB_CUDA(cudaEventCreate(&start_));
    MPSB_CUDA(cudaEventCreate(&end_));
  }
  ~EventPair() {
    cudaEventDestroy(start_);
    cudaEventDestroy(end_);
  }
  EventPair(const EventPair&) = delete;
  EventPair& operator=(const EventPair&) = delete;
  void record_start(cudaStream_t s) { MPSB_CUDA(cudaEventRecord(start_, s)); }
  void record_end(cudaStream_t s) { MPSB_CUDA(cudaEventRecord(end_, s)); }
  double elapsed_seconds() const {
    float ms = 0;
    MPSB_CUDA(cudaEventElapsedTime(&ms, start_, end_));
    return 1e-3 * static_cast<double>(ms);
  }

 private:
  cudaEvent_t start_ = nullptr, end_ = nullptr;
};

std::string gib(double bytes) {
  char text[32];
  std::snprintf(text, sizeof text, "%.2f GiB", bytes / (1024.0 * 1024.0 * 1024.0));
  return text;
}

std::string number(double value) {
  char text[32];
  std::snprintf(text, sizeof text, "%.3g", value);
  return text;
}

// Rates per second of manual time: kIsIterationInvariantRate multiplies by the
// iteration count and divides by the time the benchmark reported.
void set_counters(benchmark::State& state, const Work& work) {
  using benchmark::Counter;
  if (work.flops > 0) state.counters["FLOP/s"] = Counter(work.flops, Counter::kIsIterationInvariantRate);
  if (work.bytes > 0) state.counters["bytes/s"] = Counter(work.bytes, Counter::kIsIterationInvariantRate);
  if (work.items > 0) {
    const std::string unit = work.item_unit.empty() ? "item" : work.item_unit;
    state.counters[unit + "/s"] = Counter(work.items, Counter::kIsIterationInvariantRate);
  }
}

}  // namespace

std::vector<std::int64_t> benchmark_sizes(const KernelInfo& kernel, const MicroOptions& opt, DeviceKind device) {
  std::vector<std::int64_t> sizes = device == DeviceKind::gpu ? kernel.default_gpu_sizes : kernel.default_cpu_sizes;
  if (!opt.sizes.empty()) sizes = opt.sizes;
  if (const auto it = opt.kernel_sizes.find(kernel.name); it != opt.kernel_sizes.end()) sizes = it->second;
  for (const auto size : sizes) {
    if (size > kernel.max_size) {
      throw UsageError("--sizes: " + std::to_string(size) + " exceeds the largest " + kernel.name + " size " +
                       std::to_string(kernel.max_size));
    }
  }
  return sizes;
}

int KernelBenchmarks::register_all(const MicroOptions& opt) {
  int registered = 0;
  for (const KernelInfo& kernel : kernel_registry()) {
    const auto sizes = benchmark_sizes(kernel, opt, target_.device);
    if (sizes.empty()) continue;
    for (const std::string& precision : kernel.precisions) {
      // The registry outlives every benchmark, so the pointer stays valid.
      const KernelInfo* info = &kernel;
      const std::string name = kernel.name + "/" + precision;
      auto* bench = benchmark::RegisterBenchmark(
          name.c_str(), [this, info, precision](benchmark::State& state) { run(state, *info, precision); });
      for (const auto size : sizes) bench->Arg(size);
      bench->UseManualTime()->Unit(benchmark::kMicrosecond);
      ++registered;
    }
  }
  return registered;
}

void KernelBenchmarks::run(benchmark::State& state, const KernelInfo& kernel, const std::string& precision) {
  try {
    Workload& workload = workload_for(kernel, precision, state.range(0));
    time_iterations(state, workload);
    // Verified after every call, not once per benchmark: the library reports
    // the last call of its iteration-growing sequence and then every
    // repetition's call, so any call's timing may be the one reported.
    const Verification v = workload.verify();
    if (!v.ok) {
      fail(state, "verification failed: " + v.detail + " (max rel error " + number(v.max_rel_error) +
                      " > tolerance " + number(v.tolerance) + ")");
      return;
    }
    set_counters(state, workload.work());
    state.SetLabel("verified, max rel err " + number(v.max_rel_error));
  } catch (const std::exception& e) {
    // The workload may be half set up or hold a failed stream: never reuse it.
    cache_ = Cached{};
    fail(state, e.what());
  }
}

Workload& KernelBenchmarks::workload_for(const KernelInfo& kernel, const std::string& precision, std::int64_t size) {
  if (cache_.workload && cache_.kernel == kernel.name && cache_.precision == precision && cache_.size == size) {
    return *cache_.workload;
  }
  // Free the previous benchmark's memory before this one allocates its own.
  cache_ = Cached{};
  if (target_.device == DeviceKind::gpu && kernel.device_bytes) {
    std::size_t free_bytes = 0, total_bytes = 0;
    MPSB_CUDA(cudaMemGetInfo(&free_bytes, &total_bytes));
    const double needed = kernel.device_bytes(precision, size, {});
    if (needed > static_cast<double>(free_bytes)) {
      throw std::runtime_error("needs " + gib(needed) + " of device memory, " +
                               gib(static_cast<double>(free_bytes)) + " free");
    }
  }
  WorkloadArgs args;
  args.device = target_.device;
  args.gpu_ordinal = target_.gpu_ordinal;
  args.stream = target_.stream;
  args.precision = precision;
  args.size = size;
  auto workload = kernel.make(args);
  workload->setup(kSeed);
  // Warm-up: module loading, library heuristics and first touch stay untimed.
  workload->run();
  workload->sync();
  cache_ = Cached{kernel.name, precision, size, std::move(workload)};
  return *cache_.workload;
}

void KernelBenchmarks::time_iterations(benchmark::State& state, Workload& workload) {
  if (target_.device == DeviceKind::gpu) {
    EventPair events;
    for (auto _ : state) {
      events.record_start(target_.stream);
      workload.run();
      events.record_end(target_.stream);
      workload.sync();
      state.SetIterationTime(events.elapsed_seconds());
    }
    return;
  }
  using Clock = std::chrono::steady_clock;
  for (auto _ : state) {
    const auto start = Clock::now();
    workload.run();
    workload.sync();
    state.SetIterationTime(std::chrono::duration<double>(Clock::now() - start).count());
  }
}

void KernelBenchmarks::fail(benchmark::State& state, const std::string& why) {
  failed_ = true;
  state.SkipWithError(why.c_str());
}

}  // namespace mpsb::micro
