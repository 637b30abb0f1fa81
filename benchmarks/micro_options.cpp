#include "micro_options.hpp"

#include <cerrno>
#include <cstdlib>
#include <optional>
#include <sstream>

#include "registry.hpp"

namespace mpsb::micro {
namespace {

// "--sizes=matmul=512,1024" names one kernel (as mpsbench's --size); "--sizes=512,1024" all of them.
void parse_sizes(const std::string& value, MicroOptions& opt) {
  const auto equals = value.find('=');
  if (equals == std::string::npos) {
    opt.sizes = mpsb::parse_sizes("--sizes", value);
    return;
  }
  const std::string kernel = value.substr(0, equals);
  if (find_kernel(kernel) == nullptr) {
    std::string known;
    for (const auto& k : kernel_registry()) known += (known.empty() ? "" : ", ") + k.name;
    throw UsageError("--sizes: unknown kernel '" + kernel + "' (known: " + known + ")");
  }
  opt.kernel_sizes[kernel] = mpsb::parse_sizes("--sizes", value.substr(equals + 1));
}

DeviceRequest parse_device(const std::string& value) {
  if (value == "auto") return DeviceRequest::automatic;
  if (value == "cpu") return DeviceRequest::cpu;
  if (value == "gpu") return DeviceRequest::gpu;
  throw UsageError("--device: '" + value + "' is not one of auto, cpu, gpu");
}

// Google Benchmark answers an unknown format with its help text and exit
// status 0, which a script would take for success; refuse it here instead.
void check_library_format(const std::string& flag, const std::string& value) {
  if (value != "console" && value != "json" && value != "csv") {
    throw UsageError(flag + ": '" + value + "' is not one of console, json, csv");
  }
}

// The value of `--name=value` or `--name value`; nullopt when arg is another flag.
std::optional<std::string> flag_value(const std::string& name, int* i, int argc, char** argv) {
  const std::string arg = argv[*i];
  if (arg == name) {
    if (*i + 1 >= argc) throw UsageError(name + ": missing value");
    ++*i;
    return std::string(argv[*i]);
  }
  if (arg.rfind(name + "=", 0) == 0) return arg.substr(name.size() + 1);
  return std::nullopt;
}

}  // namespace

MicroOptions parse_micro_options(int* argc, char** argv) {
  MicroOptions opt;
  int kept = 1;
  for (int i = 1; i < *argc; ++i) {
    const std::string arg = argv[i];
    if (arg == "--help" || arg == "-h") {
      opt.show_help = true;
    } else if (arg == "--list-kernels") {
      opt.list_kernels = true;
    } else if (auto sizes = flag_value("--sizes", &i, *argc, argv)) {
      parse_sizes(*sizes, opt);
    } else if (auto device = flag_value("--device", &i, *argc, argv)) {
      opt.device = parse_device(*device);
    } else if (arg.rfind("--benchmark_out=", 0) == 0) {
      opt.benchmark_out = arg.substr(std::string("--benchmark_out=").size());
      if (opt.benchmark_out.empty()) throw UsageError("--benchmark_out: empty path");
    } else {
      for (const char* library_flag : {"--benchmark_format", "--benchmark_out_format"}) {
        const std::string prefix = std::string(library_flag) + "=";
        if (arg.rfind(prefix, 0) == 0) check_library_format(library_flag, arg.substr(prefix.size()));
      }
      argv[kept++] = argv[i];
    }
  }
  *argc = kept;
  argv[kept] = nullptr;
  return opt;
}

std::string micro_usage_text() {
  return "usage: mpsbench-micro [OPTIONS] [--benchmark_...]\n"
         "\n"
         "Google Benchmark micro-benchmarks of every registered mpsbench kernel in ONE\n"
         "process: one benchmark per kernel x precision, the sizes as arguments. Names\n"
         "read KERNEL/PRECISION/SIZE/manual_time, e.g. matmul/bf16/8192/manual_time.\n"
         "Every reported number was verified against the kernel's float64 reference\n"
         "after its timed loop; a failed check is reported as an error instead.\n"
         "\n"
         "Options:\n"
         "  --device=auto|cpu|gpu  GPU 0 when one is usable, else the CPU implementations\n"
         "                         (default: auto; gpu fails when no GPU is usable)\n"
         "  --sizes=LIST           sizes for every kernel, e.g. --sizes=256,1024\n"
         "                         (default: each kernel's default sizes for the device)\n"
         "  --sizes=KERNEL=LIST    sizes for one kernel; repeatable, wins over --sizes=LIST\n"
         "  --list-kernels         print each kernel's precisions and default sizes\n"
         "  -h, --help             this text and the Google Benchmark flags below\n"
         "\n"
         "Select benchmarks with --benchmark_filter=REGEX (e.g. 'matmul/(tf32|bf16)/8192').\n"
         "Timing: on a GPU each iteration is bracketed by CUDA events on the benchmark's\n"
         "stream and synchronized; on the CPU by std::chrono; both as manual time.\n"
         "Counters are rates: FLOP/s, bytes/s and <item unit>/s where the kernel counts them.\n"
         "Give --benchmark_min_time as a plain number of seconds (e.g. 0.5): Google\n"
         "Benchmark 1.7 accepts only that form, and 1.8 still does.\n"
         "\n"
         "--benchmark_out=PATH replaces an existing regular file at PATH when the run\n"
         "ends (atomically); a directory, link, FIFO or device there is refused.\n"
         "\n"
         "Exit status: 0 all verified, 1 a benchmark failed (verification or runtime\n"
         "error), 2 bad command line, 3 fatal error.\n"
         "\n"
         "Google Benchmark flags:\n";
}

}  // namespace mpsb::micro
