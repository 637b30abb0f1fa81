#include "cli/options.hpp"

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <sstream>

#include "cli/presets.hpp"
#include "measure/stop_rules.hpp"
#include "registry.hpp"

namespace mpsb {
namespace {

// A whole finite decimal number, or a UsageError naming `typed` (what the
// user wrote, `text` less a unit sign) as not `what`.
double parse_real(const std::string& flag, const std::string& text, const char* what,
                  const std::string& typed) {
  errno = 0;
  char* end = nullptr;
  const double value = std::strtod(text.c_str(), &end);
  if (text.empty() || end != text.c_str() + text.size() || errno == ERANGE || !std::isfinite(value) ||
      std::isspace(static_cast<unsigned char>(text.front()))) {
    throw UsageError(flag + ": '" + typed + "' is not " + what);
  }
  return value;
}

double parse_real(const std::string& flag, const std::string& text, const char* what) {
  return parse_real(flag, text, what, text);
}

double parse_seconds(const std::string& flag, const std::string& text) {
  const double value = parse_real(flag, text, "a number of seconds");
  if (value <= 0 || value > 3600) throw UsageError(flag + ": " + text + " must be in (0, 3600] seconds");
  return value;
}

// --timeout: 0 disables; the upper bound keeps the deadline representable.
double parse_timeout(const std::string& flag, const std::string& text) {
  const double value = parse_real(flag, text, "a number of seconds");
  if (value < 0 || value > 1e6) throw UsageError(flag + ": " + text + " must be in [0, 1e6] seconds (0: none)");
  return value;
}

// --warmup-time: 0 leaves only the stability check (calibration plus one batch).
double parse_warmup(const std::string& flag, const std::string& text) {
  const double value = parse_real(flag, text, "a number of seconds");
  if (value < 0 || value > 60) throw UsageError(flag + ": " + text + " must be in [0, 60] seconds");
  return value;
}

// "1", "1%" or "0.5" percent, returned as a fraction; `allow_100`: 100 % is
// a valid value (a threshold), else the range is open at 100 (a noise target).
double parse_percent(const std::string& flag, const std::string& text, bool allow_100) {
  const std::string number = !text.empty() && text.back() == '%' ? text.substr(0, text.size() - 1) : text;
  const double value = parse_real(flag, number, "a percentage", text);
  if (value <= 0 || value > 100 || (!allow_100 && value == 100)) {
    throw UsageError(flag + ": " + text + " must be in (0, 100" + (allow_100 ? "]" : ")") + " percent");
  }
  return value / 100.0;
}

// A pointer, not a reference: the entry lives in the registry, whatever the
// lifetime of the arguments (GCC 13's -Wdangling-reference cannot see that).
const KernelInfo* known_kernel(const std::string& flag, const std::string& name) {
  const KernelInfo* info = find_kernel(name);
  if (info == nullptr) {
    std::string known;
    for (const auto& k : kernel_registry()) known += (known.empty() ? "" : ", ") + k.name;
    throw UsageError(flag + ": unknown kernel '" + name + "' (known: " + known + ")");
  }
  return info;
}

void check_size_limits(const std::string& kernel, const std::vector<std::int64_t>& sizes) {
  const KernelInfo* info = known_kernel("--size", kernel);
  for (auto size : sizes) {
    if (size > info->max_size) {
      throw UsageError("--size: " + std::to_string(size) + " exceeds the largest " + kernel + " size " +
                       std::to_string(info->max_size));
    }
  }
}

// --param KERNEL.NAME=VALUE, checked against what the kernel declares.
void parse_param(const std::string& flag, const std::string& text, PlanRequest& plan) {
  const auto dot = text.find('.');
  const auto eq = text.find('=');
  if (dot == std::string::npos || eq == std::string::npos || dot > eq || dot == 0 || eq == dot + 1) {
    throw UsageError(flag + ": '" + text + "' is not KERNEL.NAME=VALUE");
  }
  const std::string kernel = text.substr(0, dot), name = text.substr(dot + 1, eq - dot - 1);
  const KernelInfo* info = known_kernel(flag, kernel);
  for (const auto& p : info->params) {
    if (p.name != name) continue;
    plan.kernel_params[kernel][name] = parse_integer(flag + " " + kernel + "." + name, text.substr(eq + 1), p.min, p.max);
    return;
  }
  std::string known;
  for (const auto& p : info->params) known += (known.empty() ? "" : ", ") + p.name;
  throw UsageError(flag + ": kernel " + kernel + " has no parameter '" + name + "' (" +
                   (known.empty() ? std::string("it has none") : "known: " + known) + ")");
}

// --allreduce BYTES: a whole number of doubles, optionally with K/M/G (KiB, MiB, GiB).
std::int64_t parse_allreduce_bytes(const std::string& flag, const std::string& text) {
  std::string digits = text;
  std::int64_t scale = 1;
  if (!digits.empty()) {
    const char unit = static_cast<char>(std::toupper(static_cast<unsigned char>(digits.back())));
    if (unit == 'K' || unit == 'M' || unit == 'G') {
      scale = unit == 'K' ? 1024 : unit == 'M' ? 1024 * 1024 : 1024 * 1024 * 1024;
      digits.pop_back();
    }
  }
  if (digits.empty() || !std::all_of(digits.begin(), digits.end(), [](char c) { return std::isdigit(static_cast<unsigned char>(c)); })) {
    throw UsageError(flag + ": '" + text + "' is not a byte count (e.g. 8, 64K, 4M)");
  }
  const std::int64_t count = parse_integer(flag, digits, 1, std::int64_t{1} << 30);
  const std::int64_t bytes = count * scale;
  if (bytes > (std::int64_t{1} << 30) || bytes % 8 != 0) {
    throw UsageError(flag + ": " + text + " must be a multiple of 8 bytes (doubles), at most 1G");
  }
  return bytes;
}

// One --gpus item: a CUDA device index (as "3", leading zeros dropped) or a
// GPU-/MIG- UUID or prefix of one, as nvidia-smi -L prints them.
std::string parse_gpu_item(const std::string& flag, const std::string& item) {
  if (item.rfind("MIG-GPU-", 0) == 0) {
    throw UsageError(flag + ": '" + item + "' is the old MIG-GPU-<uuid>/<gi>/<ci> form; give the MIG-<uuid> that "
                     "nvidia-smi -L prints");
  }
  if (item.rfind("GPU-", 0) == 0 || item.rfind("MIG-", 0) == 0) {
    const std::string hex = item.substr(4);
    const bool valid = !hex.empty() && std::all_of(hex.begin(), hex.end(), [](char c) {
      return std::isxdigit(static_cast<unsigned char>(c)) || c == '-';
    });
    if (!valid) throw UsageError(flag + ": '" + item + "' is not a GPU-/MIG- UUID (hex digits and dashes after the prefix)");
    return item;
  }
  if (item.empty() || !std::all_of(item.begin(), item.end(), [](char c) { return std::isdigit(static_cast<unsigned char>(c)); })) {
    throw UsageError(flag + ": '" + item + "' is neither a CUDA device index nor a GPU-/MIG- UUID");
  }
  return std::to_string(parse_integer(flag, item, 0, 1023));
}

// --mix matmul:4,inference/fp16/64:4
std::vector<Tenant> parse_mix(const std::string& flag, const std::string& text) {
  std::vector<Tenant> tenants;
  for (const auto& item : split_list(flag, text)) {
    const auto colon = item.rfind(':');
    if (colon == std::string::npos || colon == 0) {
      throw UsageError(flag + ": '" + item + "' is not KERNEL[/PRECISION[/SIZE]]:RANKS");
    }
    Tenant t;
    t.ranks_per_gpu = static_cast<int>(parse_integer(flag + " " + item, item.substr(colon + 1), 1, 1024));
    std::vector<std::string> parts;
    std::string spec = item.substr(0, colon);
    for (std::size_t start = 0;;) {
      const auto slash = spec.find('/', start);
      parts.push_back(spec.substr(start, slash == std::string::npos ? std::string::npos : slash - start));
      if (slash == std::string::npos) break;
      start = slash + 1;
    }
    if (parts.size() > 3 || parts.front().empty()) {
      throw UsageError(flag + ": '" + item + "' is not KERNEL[/PRECISION[/SIZE]]:RANKS");
    }
    const KernelInfo* info = known_kernel(flag, parts[0]);
    t.kernel = info->name;
    if (parts.size() > 1) {
      t.precision = parts[1];
      if (std::find(info->precisions.begin(), info->precisions.end(), t.precision) == info->precisions.end()) {
        throw UsageError(flag + ": kernel " + t.kernel + " has no precision '" + t.precision + "'");
      }
    }
    if (parts.size() > 2) {
      t.size = parse_integer(flag + " " + item, parts[2], 1, info->max_size);
    }
    tenants.push_back(std::move(t));
  }
  if (tenants.size() < 2) throw UsageError(flag + ": '" + text + "' names one tenant; a mix needs at least two");
  return tenants;
}

}  // namespace

const char* to_string(DeviceChoice choice) {
  switch (choice) {
    case DeviceChoice::gpu: return "gpu";
    case DeviceChoice::cpu: return "cpu";
    default: return "auto";
  }
}

Options parse_options(const std::vector<std::string>& typed) {
  const std::vector<std::string> args = expand_presets(typed, preset_directory());
  Options opt;
  bool retries_given = false;
  for (std::size_t i = 0; i < args.size(); ++i) {
    std::string flag = args[i];
    std::string value;
    bool has_inline_value = false;
    if (const auto eq = flag.find('='); flag.rfind("--", 0) == 0 && eq != std::string::npos) {
      value = flag.substr(eq + 1);
      flag = flag.substr(0, eq);
      has_inline_value = true;
    }
    auto take_value = [&]() -> std::string {
      if (has_inline_value) return value;
      if (i + 1 >= args.size()) throw UsageError(flag + ": missing value");
      return args[++i];
    };
    auto no_value = [&]() {
      if (has_inline_value) throw UsageError(flag + ": takes no value (got '" + value + "')");
    };

    if (flag == "-h" || flag == "--help") {
      no_value();
      opt.show_help = true;
    } else if (flag == "--version") {
      no_value();
      opt.show_version = true;
    } else if (flag == "--list-kernels") {
      no_value();
      opt.list_kernels = true;
    } else if (flag == "--list-presets") {
      no_value();
      opt.list_presets = true;
    } else if (flag == "--list-modes") {
      no_value();
      opt.list_modes = true;
    } else if (flag == "--kernel") {
      opt.plan.kernels = unique_in_order(split_list(flag, take_value()));
      for (const auto& name : opt.plan.kernels) known_kernel(flag, name);
    } else if (flag == "--precision") {
      opt.plan.precisions = unique_in_order(split_list(flag, take_value()));
    } else if (flag == "--size") {
      const std::string v = take_value();
      if (const auto eq = v.find('='); eq != std::string::npos) {
        const std::string kernel = v.substr(0, eq);
        known_kernel(flag, kernel);
        opt.plan.kernel_sizes[kernel] = parse_sizes(flag, v.substr(eq + 1));
      } else {
        opt.plan.sizes = parse_sizes(flag, v);
      }
    } else if (flag == "--ranks-per-gpu") {
      opt.plan.ranks_per_gpu.clear();
      for (const auto& item : split_list(flag, take_value())) {
        opt.plan.ranks_per_gpu.push_back(static_cast<int>(parse_integer(flag, item, 1, 1 << 20)));
      }
      opt.plan.ranks_per_gpu = unique_in_order(opt.plan.ranks_per_gpu);
    } else if (flag == "--device") {
      const std::string v = take_value();
      if (v == "auto") opt.device = DeviceChoice::automatic;
      else if (v == "gpu") opt.device = DeviceChoice::gpu;
      else if (v == "cpu") opt.device = DeviceChoice::cpu;
      else throw UsageError("--device: unknown device '" + v + "' (choose auto, gpu or cpu)");
    } else if (flag == "--mode") {
      opt.mode = parse_sharing_mode(take_value());
    } else if (flag == "--gpus") {
      opt.gpus.clear();
      for (const auto& item : split_list(flag, take_value())) {
        const std::string gpu = parse_gpu_item(flag, item);
        for (const auto& seen : opt.gpus) {
          if (seen == gpu) throw UsageError(flag + ": GPU " + item + " listed twice");
        }
        opt.gpus.push_back(gpu);
      }
    } else if (flag == "--other-mps-users") {
      opt.other_mps_users = parse_other_mps_users(take_value());
    } else if (flag == "--min-time") {
      opt.min_time_s = parse_seconds(flag, take_value());
    } else if (flag == "--repetitions") {
      opt.repetitions = static_cast<int>(parse_integer(flag, take_value(), 1, 1000));
    } else if (flag == "--warmup-time") {
      opt.warmup_time_s = parse_warmup(flag, take_value());
    } else if (flag == "--max-noise") {
      opt.max_noise = parse_percent(flag, take_value(), false);
    } else if (flag == "--max-time") {
      opt.max_time_s = parse_seconds(flag, take_value());
    } else if (flag == "--discard-throttled") {
      no_value();
      opt.discard_throttled = true;
    } else if (flag == "--throttle-retries") {
      opt.throttle_retries = static_cast<int>(parse_integer(flag, take_value(), 0, 100));
      retries_given = true;
    } else if (flag == "--clock-threshold") {
      opt.clock_threshold = parse_percent(flag, take_value(), true);
    } else if (flag == "--seed") {
      opt.seed = static_cast<std::uint64_t>(parse_integer(flag, take_value(), 0, INT64_MAX));
    } else if (flag == "--output") {
      opt.output = take_value();
      if (opt.output.empty()) throw UsageError("--output: empty path");
    } else if (flag == "--timeout") {
      opt.timeout_s = parse_timeout(flag, take_value());
    } else if (flag == "--resume") {
      opt.resume = take_value();
      if (opt.resume.empty()) throw UsageError("--resume: empty path");
    } else if (flag == "--param") {
      parse_param(flag, take_value(), opt.plan);
    } else if (flag == "--allreduce") {
      opt.allreduce_bytes = parse_allreduce_bytes(flag, take_value());
    } else if (flag == "--mix") {
      opt.plan.mix = take_value();
      opt.plan.mix_tenants = parse_mix(flag, opt.plan.mix);
    } else {
      throw UsageError("unknown option '" + args[i] + "' (see --help)");
    }
  }

  // Cross-checks that need the whole command line.
  if (opt.max_noise) {
    // Below three repetitions the noise estimate rests on one difference.
    if (opt.repetitions < 3) {
      throw UsageError("--repetitions: " + std::to_string(opt.repetitions) +
                       " is too few with --max-noise, which makes it the minimum (at least 3)");
    }
    if (!opt.max_time_s) opt.max_time_s = kDefaultMaxTimeS;
  } else if (opt.max_time_s) {
    throw UsageError("--max-time: needs --max-noise (without it --repetitions is a fixed count)");
  }
  if (retries_given && !opt.discard_throttled) {
    throw UsageError("--throttle-retries: needs --discard-throttled (nothing is retaken without it)");
  }
  if (opt.device == DeviceChoice::cpu && mode_info(opt.mode).needs_gpu) {
    throw UsageError(std::string("--mode ") + to_string(opt.mode) + ": needs the GPU, not --device cpu");
  }
  if (opt.allreduce_bytes && runs_instances_in_one_rank(opt.mode)) {
    throw UsageError(std::string("--allreduce: needs one rank per instance; --mode ") + to_string(opt.mode) +
                     " runs k instances in one rank");
  }
  if (!opt.plan.mix.empty()) {
    if (runs_instances_in_one_rank(opt.mode)) {
      throw UsageError(std::string("--mix: tenants are separate ranks; --mode ") + to_string(opt.mode) +
                       " runs one rank per GPU");
    }
    if (opt.allreduce_bytes) {
      throw UsageError("--allreduce: the tenants of --mix run different iteration counts, so their ranks "
                       "cannot meet in one collective per iteration; use one or the other");
    }
    if (!opt.plan.kernels.empty() || !opt.plan.precisions.empty() || !opt.plan.sizes.empty() || !opt.plan.kernel_sizes.empty() ||
        !opt.plan.ranks_per_gpu.empty()) {
      throw UsageError("--mix: sets the plan itself (each tenant's kernel, precision, size and ranks); drop "
                       "--kernel, --precision, --size and --ranks-per-gpu");
    }
  }
  const std::vector<std::string> selected = [&] {
    if (!opt.plan.kernels.empty()) return opt.plan.kernels;
    std::vector<std::string> all;
    for (const auto& k : kernel_registry()) all.push_back(k.name);
    return all;
  }();
  opt.plan.all_precisions = opt.plan.precisions.size() == 1 && opt.plan.precisions.front() == kAllPrecisions;
  if (opt.plan.all_precisions) opt.plan.precisions.clear();
  for (const auto& p : opt.plan.precisions) {
    bool supported = false;
    for (const auto& k : selected) {
      for (const auto& kp : find_kernel(k)->precisions) supported = supported || kp == p;
    }
    if (!supported) throw UsageError("--precision: no selected kernel supports precision '" + p + "'");
  }
  for (const auto& [kernel, sizes] : opt.plan.kernel_sizes) check_size_limits(kernel, sizes);
  if (!opt.plan.sizes.empty()) {
    for (const auto& k : selected) {
      if (opt.plan.kernel_sizes.count(k) == 0) check_size_limits(k, opt.plan.sizes);
    }
  }
  return opt;
}

std::string usage_text() {
  std::ostringstream out;
  out << "usage: mpirun -np N mpsbench [options]\n"
         "\n"
         "Measures how well N MPI ranks share the GPUs of their node: every kernel x\n"
         "precision x size x active ranks per GPU, each result verified.\n"
         "\n"
         "Lists are comma-separated; an item given twice counts once (--gpus excepted:\n"
         "a GPU listed twice is an error, since the list decides the placement).\n"
         "\n"
         "  --kernel LIST         kernels to run (default: all; see --list-kernels)\n"
         "  --precision LIST|all  precisions (default: each kernel's defaults; all: every\n"
         "                        precision each kernel supports)\n"
         "  --size LIST           problem sizes for every kernel (default: per kernel)\n"
         "  --size KERNEL=LIST    problem sizes for one kernel (repeatable)\n"
         "  --ranks-per-gpu LIST  active ranks per GPU (default: 1,2,4,... up to all)\n"
         "  --device auto|gpu|cpu where kernels run (default: auto = gpu when usable)\n"
         "  --mode MODE           how ranks share a GPU: auto (record what is found),\n"
         "                        timeslice, mps, mps-qos (verified against what each\n"
         "                        rank's context reports), streams (one rank per GPU\n"
         "                        runs k instances in k streams and threads), or green\n"
         "                        (as streams, each instance in a CUDA green context\n"
         "                        holding 1/k of the SMs)\n"
         "  --gpus LIST           restrict to these CUDA devices: indices, or GPU-/MIG- UUIDs\n"
         "                        (or unique prefixes) as nvidia-smi -L prints them\n"
         "                        (default: all)\n"
         "  --other-mps-users refuse|go-on  an MPS server or control daemon of another\n"
         "                        user on a host makes this job's MPS clients wait\n"
         "                        until that user's server has no clients, and the\n"
         "                        timings would include the wait: refuse (default,\n"
         "                        exit 2) or go-on (one warning line, then measure)\n"
         "  --min-time SECONDS    shortest timed window per repetition (default: 0.25)\n"
         "  --repetitions N       timed windows per configuration (default: 5; with\n"
         "                        --max-noise the minimum, at least 3)\n"
         "  --warmup-time SECONDS warm up (calibration included) at least this long and\n"
         "                        until two windows agree within 2%, at most 10x as long\n"
         "                        (default: 0.2)\n"
         "  --max-noise PERCENT   repeat until the relative standard error of the median\n"
         "                        throughput is at most PERCENT (e.g. 1, 1%, 0.5), or\n"
         "                        --max-time is spent, or 100 repetitions (default: off)\n"
         "  --max-time SECONDS    repetition budget per configuration with --max-noise\n"
         "                        (default: 10)\n"
         "  --discard-throttled   drop and retake a repetition during which a GPU was\n"
         "                        throttled (power or thermal event, or SM clock below\n"
         "                        --clock-threshold of its maximum)\n"
         "  --throttle-retries N  with --discard-throttled: repetitions dropped per\n"
         "                        configuration at most (default: 3)\n"
         "  --clock-threshold PERCENT  SM clock below PERCENT of the GPU's maximum marks\n"
         "                        a repetition as throttled (default: 90)\n"
         "  --seed N              random input seed (default: 1)\n"
         "  --output PATH         JSON results (default: mpsbench-DATE-TIME.json, never\n"
         "                        overwriting an earlier file). An existing regular\n"
         "                        file at PATH is replaced (atomically, after every\n"
         "                        configuration); anything else there (a directory,\n"
         "                        a symbolic link, a FIFO, a device such as /dev/null)\n"
         "                        is refused (exit 2)\n"
         "  --timeout SECONDS     abort the job (exit 3) when one configuration takes\n"
         "                        longer (default: 600; 0: no limit)\n"
         "  --resume FILE         continue the killed run whose results are in FILE (a\n"
         "                        regular file, not a link):\n"
         "                        keep its finished configurations, run the rest and\n"
         "                        write FILE (or --output) again\n"
         "  --param KERNEL.NAME=VALUE  a kernel parameter beyond precision and size\n"
         "                        (repeatable; see --list-kernels), e.g.\n"
         "                        --param inference.hidden=4096\n"
         "  --allreduce BYTES     after every iteration, an MPI_Allreduce (sum of\n"
         "                        doubles) of BYTES (8, 64K, 4M, ...) over the active\n"
         "                        ranks on host buffers, as a data-parallel step does\n"
         "                        without NCCL; its time is reported separately and\n"
         "                        its result checked (not with --mode streams, green)\n"
         "  --mix TENANT:RANKS,...  ranks of one GPU run different kernels, TENANT =\n"
         "                        KERNEL[/PRECISION[/SIZE]] (default: the kernel's first\n"
         "                        precision and middle default size); the plan holds\n"
         "                        each tenant alone at its ranks, each at the total,\n"
         "                        and the mix, for the slowdown of each tenant\n"
         "  --preset NAME         the options of presets/NAME.json in place (flags after\n"
         "                        it override them; see --list-presets)\n"
         "  --list-kernels        list kernels, precisions and default sizes\n"
         "  --list-presets        list presets with their descriptions and options\n"
         "  --list-modes          list the sharing modes, one line each: name, mps=, one-process=,\n"
         "                        needs-gpu= and what it does\n"
         "  --version             print the version and git commit\n"
         "  -h, --help            this text\n"
         "\n"
         "Exit status: 0 all results verified, 1 a verification failed or a\n"
         "configuration failed (out of memory),\n"
         "2 bad input (nothing measured), 3 fatal runtime error (job aborted).\n";
  return out.str();
}

}  // namespace mpsb
