#include "cli/options.hpp"

#include <set>

#include "cli/option_table.hpp"
#include "cli/option_values.hpp"
#include "cli/presets.hpp"
#include "measure/stop_rules.hpp"
#include "registry.hpp"
#include "runtime/usage_error.hpp"

namespace mpsb {
namespace {

// Checks that need the whole command line; `given`: the names of the options it set.
void cross_check(Options& opt, const std::set<std::string>& given) {
  MeasureSettings& m = opt.measure;
  if (m.max_noise) {
    // Below three repetitions the noise estimate rests on one difference.
    if (m.repetitions < 3) {
      throw UsageError("--repetitions: " + std::to_string(m.repetitions) +
                       " is too few with --max-noise, which makes it the minimum (at least 3)");
    }
    if (!m.max_time_s) m.max_time_s = kDefaultMaxTimeS;
  } else if (m.max_time_s) {
    throw UsageError("--max-time: needs --max-noise (without it --repetitions is a fixed count)");
  }
  if (given.count("--throttle-retries") && !m.discard_throttled) {
    throw UsageError("--throttle-retries: needs --discard-throttled (nothing is retaken without it)");
  }
  if (!opt.turns.empty() && m.discard_throttled) {
    throw UsageError("--discard-throttled: needs the GPU monitor's clocks, and a job in mpsbench-sweep's turns "
                     "runs without it (mpsbench-sweep --turns off keeps it)");
  }
  if (given.count("--cpu-retries") && !m.discard_cpu_slowed) {
    throw UsageError("--cpu-retries: needs --discard-cpu-slowed (nothing is retaken without it)");
  }
  const SharingModeInfo& mode = mode_info(opt.mode);
  if (opt.device == DeviceChoice::cpu && mode.needs_gpu) {
    throw UsageError(std::string("--mode ") + mode.name + ": needs the GPU, not --device cpu");
  }
  if (m.allreduce_bytes && mode.one_process) {
    throw UsageError(std::string("--allreduce: needs one rank per instance; --mode ") + mode.name +
                     " runs k instances in one rank");
  }
  PlanRequest& plan = opt.plan;
  if (!plan.mix.empty()) {
    if (mode.one_process) {
      throw UsageError(std::string("--mix: tenants are separate ranks; --mode ") + mode.name +
                       " runs one rank per GPU");
    }
    if (m.allreduce_bytes) {
      throw UsageError("--allreduce: the tenants of --mix run different iteration counts, so their ranks "
                       "cannot meet in one collective per iteration; use one or the other");
    }
    if (!plan.kernels.empty() || !plan.precisions.empty() || !plan.sizes.empty() || !plan.kernel_sizes.empty() ||
        !plan.ranks_per_gpu.empty()) {
      throw UsageError("--mix: sets the plan itself (each tenant's kernel, precision, size and ranks); drop "
                       "--kernel, --precision, --size and --ranks-per-gpu");
    }
  }
  const std::vector<std::string> selected = [&] {
    if (!plan.kernels.empty()) return plan.kernels;
    std::vector<std::string> all;
    for (const auto& k : kernel_registry()) all.push_back(k.name);
    return all;
  }();
  plan.all_precisions = plan.precisions.size() == 1 && plan.precisions.front() == kAllPrecisions;
  if (plan.all_precisions) plan.precisions.clear();
  for (const auto& p : plan.precisions) {
    bool supported = false;
    for (const auto& k : selected) {
      for (const auto& kp : find_kernel(k)->precisions) supported = supported || kp == p;
    }
    if (!supported) throw UsageError("--precision: no selected kernel supports precision '" + p + "'");
  }
  for (const auto& [kernel, sizes] : plan.kernel_sizes) check_size_limits(kernel, sizes);
  if (!plan.sizes.empty()) {
    for (const auto& k : selected) {
      if (plan.kernel_sizes.count(k) == 0) check_size_limits(k, plan.sizes);
    }
  }
  m.green_contexts = mode.green_contexts;
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
  std::set<std::string> given;
  for (std::size_t i = 0; i < args.size(); ++i) {
    std::string flag = args[i];
    std::string value;
    bool has_inline_value = false;
    if (const auto eq = flag.find('='); flag.rfind("--", 0) == 0 && eq != std::string::npos) {
      value = flag.substr(eq + 1);
      flag = flag.substr(0, eq);
      has_inline_value = true;
    }
    const OptionSpec* spec = find_option(flag);
    if (spec == nullptr || spec->apply == nullptr) throw UsageError("unknown option '" + args[i] + "' (see --help)");
    if (*spec->placeholder == '\0') {
      if (has_inline_value) throw UsageError(flag + ": takes no value (got '" + value + "')");
    } else if (!has_inline_value) {
      if (i + 1 >= args.size()) throw UsageError(flag + ": missing value");
      value = args[++i];
    }
    spec->apply(opt, flag, value);
    given.insert(spec->name);
  }
  cross_check(opt, given);
  return opt;
}

}  // namespace mpsb
