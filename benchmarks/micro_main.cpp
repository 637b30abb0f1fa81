// mpsbench-micro: every registered kernel, one process, Google Benchmark.
// Exit codes as mpsbench's: 0 all verified, 1 a benchmark failed, 2 bad
// command line, 3 fatal runtime error.
#include <unistd.h>

#include <benchmark/benchmark.h>
#include <cuda_runtime_api.h>

#include <cstddef>
#include <iostream>
#include <memory>
#include <string>
#include <type_traits>
#include <vector>

#include "cuda_check.hpp"
#include "kernel_benchmark.hpp"
#include "micro_device.hpp"
#include "micro_options.hpp"
#include "registry.hpp"
#include "runtime/atomic_file.hpp"

namespace mpsb::micro {
namespace {

constexpr int kExitBenchmarkFailed = 1;
constexpr int kExitUsage = 2;  // fatal errors: mpsb::kExitFatal (cuda_check.hpp), as mpsbench

// One line per kernel, `name key=a,b ...`, so scripts can read it too.
void print_kernels(std::ostream& out) {
  auto list = [](const auto& values) {
    std::string text;
    for (const auto& v : values) {
      if (!text.empty()) text += ",";
      if constexpr (std::is_same_v<std::decay_t<decltype(v)>, std::string>) {
        text += v;
      } else {
        text += std::to_string(v);
      }
    }
    return text;
  };
  for (const auto& k : kernel_registry()) {
    out << k.name << " precisions=" << list(k.precisions) << " gpu_sizes=" << list(k.default_gpu_sizes)
        << " cpu_sizes=" << list(k.default_cpu_sizes) << " max_size=" << k.max_size << "\n";
  }
}

// The stream every GPU workload issues its work to, as in the harness.
class Stream {
 public:
  explicit Stream(bool create) {
    if (create) MPSB_CUDA(cudaStreamCreateWithFlags(&stream_, cudaStreamNonBlocking));
  }
  ~Stream() {
    if (stream_ != nullptr) cudaStreamDestroy(stream_);
  }
  Stream(const Stream&) = delete;
  Stream& operator=(const Stream&) = delete;
  cudaStream_t get() const { return stream_; }

 private:
  cudaStream_t stream_ = nullptr;
};

std::string host_name() {
  char name[256] = {};
  if (gethostname(name, sizeof name - 1) != 0) return "?";
  return name;
}

int run(int argc, char** argv) {
  const MicroOptions opt = parse_micro_options(&argc, argv);
  if (opt.show_help) {
    std::cout << micro_usage_text() << std::flush;
    benchmark::PrintDefaultHelp();
    return 0;
  }
  if (opt.list_kernels) {
    print_kernels(std::cout);
    return 0;
  }
  // The library opens --benchmark_out with std::ofstream, which follows a
  // planted link and truncates a FIFO or device; it gets our unpredictably
  // named temporary instead (through its descriptor), renamed over PATH at the end.
  std::unique_ptr<TemporaryFile> out_file;
  std::string out_flag;
  std::vector<char*> args(argv, argv + argc);
  if (!opt.benchmark_out.empty()) {
    try {
      out_file = std::make_unique<TemporaryFile>(opt.benchmark_out);
    } catch (const std::runtime_error& e) {
      throw UsageError(std::string("--benchmark_out: ") + e.what());
    }
    out_flag = "--benchmark_out=/dev/fd/" + std::to_string(out_file->fd());
    args.push_back(out_flag.data());
  }
  args.push_back(nullptr);
  argc = static_cast<int>(args.size()) - 1;
  argv = args.data();
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return kExitUsage;

  // Error messages name the process as the harness's do; this one is alone.
  set_error_identity(0, host_name());
  const DeviceInUse device = choose_device(opt.device);
  add_device_context(device);
  const Stream stream(device.kind == DeviceKind::gpu);
  KernelBenchmarks benchmarks(Target{device.kind, device.gpu_ordinal, stream.get()});
  if (benchmarks.register_all(opt) == 0) throw UsageError("no kernel has sizes to benchmark on this device");
  const std::size_t matched = benchmark::RunSpecifiedBenchmarks();
  benchmarks.release();
  benchmark::Shutdown();
  if (out_file) out_file->commit();
  // The library has said which filter matched nothing, but exits 0: a typo
  // in a scripted filter must not pass for an empty success.
  if (matched == 0) return kExitUsage;
  return benchmarks.any_failed() ? kExitBenchmarkFailed : 0;
}

}  // namespace
}  // namespace mpsb::micro

int main(int argc, char** argv) {
  try {
    return mpsb::micro::run(argc, argv);
  } catch (const mpsb::micro::UsageError& e) {
    std::cerr << "mpsbench-micro: " << e.what() << "\n";
    return mpsb::micro::kExitUsage;
  } catch (const std::exception& e) {
    std::cerr << "mpsbench-micro: fatal: " << e.what() << "\n";
    return mpsb::kExitFatal;
  }
}
