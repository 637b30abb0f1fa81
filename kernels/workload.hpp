// The one interface every benchmarked kernel implements, and the static
// description (KernelInfo) through which the harness finds it. The harness
// never names a kernel: it asks the registry.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include <cuda_runtime_api.h>

namespace mpsb {

// Work done by one iteration; the harness divides it by measured time.
struct Work {
  double flops = 0;      // floating-point operations (0 when not meaningful)
  double bytes = 0;      // minimum device-memory (or host-memory) traffic
  double items = 0;      // kernel-specific unit, e.g. interactions
  std::string item_unit; // e.g. "interaction", "iteration"; empty when items == 0
};

struct Verification {
  bool ok = false;
  double max_rel_error = 0;  // in the kernel's documented error metric
  double tolerance = 0;      // the bound max_rel_error was compared against
  std::int64_t checked = 0;  // values compared against the reference
  std::string detail;        // why it failed, empty when ok
};

enum class DeviceKind { cpu, gpu };

// A kernel's integer parameter beyond precision and size (e.g. an MLP's hidden
// width), declared in its KernelInfo and set with --param KERNEL.NAME=VALUE.
struct KernelParam {
  std::string name;
  std::int64_t default_value = 0;
  std::int64_t min = 1, max = 1;  // accepted range, inclusive
  std::string doc;                // one line for --list-kernels
};
// Name -> value: every declared parameter of the kernel (defaults filled in by
// the harness); empty for kernels that declare none.
using KernelParams = std::map<std::string, std::int64_t>;

struct WorkloadArgs {
  DeviceKind device = DeviceKind::cpu;
  int gpu_ordinal = -1;            // CUDA device of this rank when device == gpu
  cudaStream_t stream = nullptr;   // owned by the harness; all GPU work goes here
  std::string precision;
  std::int64_t size = 0;
  KernelParams params;  // tests may leave it empty: param() then gives the fallback
  // SMs this instance may use where the device's count says otherwise (a green context's partition,
  // --mode green); 0: the device's. Kernels that size their grids by the SM count use it.
  int sm_count = 0;

  std::int64_t param(const std::string& name, std::int64_t fallback) const {
    const auto it = params.find(name);
    return it == params.end() ? fallback : it->second;
  }
};

// One kernel at one size and precision, owned by one rank.
class Workload {
 public:
  virtual ~Workload() = default;
  virtual void setup(std::uint64_t seed) = 0;  // untimed: allocate, random inputs, handles
  virtual void run() = 0;                      // one iteration; may be asynchronous on the stream
  virtual void sync() = 0;                     // wait for all work issued so far
  virtual Work work() const = 0;               // per iteration
  virtual Verification verify() = 0;           // against a float64 CPU reference, after timing
  // Kernel-specific figures of the timed iterations, each name ending in its
  // unit (e.g. {"cpu_phase_s", 1.2e-3}); the harness records them per rank.
  virtual std::vector<std::pair<std::string, double>> details() const { return {}; }
  // Called untimed (and followed by sync()) before the last repetition: a
  // kernel whose iterations all write the same output re-poisons it here, so
  // verify() proves the timed iterations ran, not just the warm-up. Kernels
  // whose state carries from one iteration to the next need nothing.
  virtual void poison_outputs() {}
  // Called untimed before a configuration that reuses this workload (the
  // harness keeps it from the previous configuration of the same kernel,
  // precision and size): a kernel whose details() accumulate over its runs
  // starts them afresh here, so they describe this configuration alone.
  virtual void restart_details() {}
};

// Which Work field is the headline throughput of a kernel.
enum class PrimaryMetric { flops, items, bytes };

struct KernelInfo {
  std::string name;                          // "matmul"
  std::string summary;                       // one line for --list-kernels
  int suite_order = 100;                     // position in the default suite
  std::vector<std::string> precisions;       // all supported
  std::vector<std::string> default_precisions;
  std::vector<std::int64_t> default_gpu_sizes;
  std::vector<std::int64_t> default_cpu_sizes;
  std::int64_t max_size = 0;                 // largest accepted size
  PrimaryMetric primary = PrimaryMetric::flops;
  std::vector<KernelParam> params;           // beyond precision and size; usually none
  // One iteration is one request: the harness synchronizes after every
  // iteration, times each with host timestamps and reports latency
  // percentiles (run() must leave the request's result on the host or stream).
  bool per_iteration_latency = false;
  // Device memory one rank needs (for the preflight check); 0 on the CPU.
  std::function<double(const std::string& precision, std::int64_t size, const KernelParams& params)> device_bytes;
  std::function<std::unique_ptr<Workload>(const WorkloadArgs&)> make;
};

}  // namespace mpsb
