#include "cli/option_table.hpp"

#include <cstdint>

#include "cli/option_values.hpp"
#include "runtime/values.hpp"

namespace mpsb {
namespace {

using Apply = void (*)(Options&, const std::string&, const std::string&);

// "streams, green": the modes that run every instance of a GPU in one rank.
std::string one_process_modes() {
  std::string names;
  for (const auto& m : sharing_modes()) {
    if (m.one_process) names += (names.empty() ? "" : ", ") + std::string(m.name);
  }
  return names;
}

// --mode's help: every row of the mode table.
std::string mode_help() {
  std::string text = "how ranks share a GPU, verified against what each rank's context reports:";
  const auto& modes = sharing_modes();
  for (std::size_t i = 0; i < modes.size(); ++i) {
    text += std::string(i == 0 ? " " : i + 1 == modes.size() ? "; or " : "; ") + modes[i].name + " (" +
            modes[i].description + ")";
  }
  return text;
}

DeviceChoice parse_device_choice(const std::string& text) {
  if (text == "auto") return DeviceChoice::automatic;
  if (text == "gpu") return DeviceChoice::gpu;
  if (text == "cpu") return DeviceChoice::cpu;
  throw UsageError("--device: unknown device '" + text + "' (choose auto, gpu or cpu)");
}

std::vector<OptionSpec> build_table() {
  return {
      {"--kernel", "", "LIST", "all", "kernels to run; see --list-kernels",
       [](Options& o, const std::string& flag, const std::string& v) {
         o.plan.kernels = unique_in_order(split_list(flag, v));
         for (const auto& name : o.plan.kernels) known_kernel(flag, name);
       }},
      {"--precision", "", "LIST|all", "each kernel's defaults",
       "precisions; all: every precision each kernel supports",
       [](Options& o, const std::string& flag, const std::string& v) {
         o.plan.precisions = unique_in_order(split_list(flag, v));
       }},
      {"--size", "", "LIST|KERNEL=LIST", "per kernel",
       "problem sizes for every kernel, or with KERNEL= for that kernel only (repeatable)",
       [](Options& o, const std::string& flag, const std::string& v) {
         if (const auto eq = v.find('='); eq != std::string::npos) {
           const std::string kernel = v.substr(0, eq);
           known_kernel(flag, kernel);
           o.plan.kernel_sizes[kernel] = parse_sizes(flag, v.substr(eq + 1));
         } else {
           o.plan.sizes = parse_sizes(flag, v);
         }
       }},
      {"--ranks-per-gpu", "", "LIST", "1,2,4,... up to all", "active ranks per GPU",
       [](Options& o, const std::string& flag, const std::string& v) {
         std::vector<int> counts;
         for (const auto& item : split_list(flag, v)) {
           counts.push_back(static_cast<int>(parse_integer(flag, item, 1, 1 << 20)));
         }
         o.plan.ranks_per_gpu = unique_in_order(counts);
       }},
      {"--device", "", "auto|gpu|cpu", "auto", "where kernels run; auto: the GPU when one is usable",
       [](Options& o, const std::string&, const std::string& v) { o.device = parse_device_choice(v); }},
      {"--mode", "", "MODE", "auto", mode_help(),
       [](Options& o, const std::string&, const std::string& v) { o.mode = parse_sharing_mode(v); }},
      {"--gpus", "", "LIST", "all",
       "restrict to these CUDA devices: indices, or GPU-/MIG- UUIDs (or unique prefixes) as nvidia-smi -L prints them",
       [](Options& o, const std::string& flag, const std::string& v) { o.gpus = parse_gpu_list(flag, v); }},
      {"--other-mps-users", "", "refuse|go-on", "refuse",
       "an MPS server or control daemon of another user on a host makes this job's MPS clients wait until that "
       "user's server has no clients, and the timings would include the wait: refuse (exit 2) or go-on (one "
       "warning line, then measure)",
       [](Options& o, const std::string&, const std::string& v) { o.other_mps_users = parse_other_mps_users(v); }},
      {"--min-time", "", "SECONDS", "0.25", "shortest timed window per repetition",
       [](Options& o, const std::string& flag, const std::string& v) {
         o.measure.min_time_s = parse_seconds(flag, v);
       }},
      {"--repetitions", "", "N", "5", "timed windows per configuration; with --max-noise the minimum, at least 3",
       [](Options& o, const std::string& flag, const std::string& v) {
         o.measure.repetitions = static_cast<int>(parse_integer(flag, v, 1, 1000));
       }},
      {"--warmup-time", "", "SECONDS", "0.2",
       "warm up (calibration included) at least this long and until two windows agree within 2%, at most 10x as "
       "long",
       [](Options& o, const std::string& flag, const std::string& v) {
         o.measure.warmup_time_s = parse_warmup(flag, v);
       }},
      {"--max-noise", "", "PERCENT", "off",
       "repeat until the relative standard error of the median throughput is at most PERCENT (e.g. 1, 1%, 0.5), "
       "or --max-time is spent, or 100 repetitions",
       [](Options& o, const std::string& flag, const std::string& v) {
         o.measure.max_noise = parse_percent(flag, v, false);
       }},
      {"--max-time", "", "SECONDS", "10", "repetition budget per configuration with --max-noise",
       [](Options& o, const std::string& flag, const std::string& v) {
         o.measure.max_time_s = parse_seconds(flag, v);
       }},
      {"--discard-throttled", "", "", "",
       "drop and retake a repetition during which a GPU was throttled (power or thermal event, or SM clock below "
       "--clock-threshold of its maximum)",
       [](Options& o, const std::string&, const std::string&) { o.measure.discard_throttled = true; }},
      {"--one-rank-repetitions", "", "N", "--repetitions",
       "timed windows per configuration at one rank per GPU, the baseline of every speedup, whose figure one "
       "process on one host core carries alone (at k ranks k cores average out)",
       [](Options& o, const std::string& flag, const std::string& v) {
         o.measure.one_rank_repetitions = static_cast<int>(parse_integer(flag, v, 1, 1000));
       }},
      {"--throttle-retries", "", "N", "3", "with --discard-throttled: repetitions dropped per configuration at most",
       [](Options& o, const std::string& flag, const std::string& v) {
         o.measure.throttle_retries = static_cast<int>(parse_integer(flag, v, 0, 100));
       }},
      {"--clock-threshold", "", "PERCENT", "90",
       "SM clock below PERCENT of the GPU's maximum marks a repetition as throttled",
       [](Options& o, const std::string& flag, const std::string& v) {
         o.measure.clock_threshold = parse_percent(flag, v, true);
       }},
      {"--cpu-threshold", "", "PERCENT", "30",
       "a timed thread's CPU probe (run just before and after every repetition) more than PERCENT slower than its "
       "fastest in this job marks the repetition as CPU-slowed (the host's CPU was slower than it can be: a shared "
       "host's vCPU, steal, another process on its core)",
       [](Options& o, const std::string& flag, const std::string& v) {
         o.measure.cpu_threshold = parse_slowdown_percent(flag, v);
       }},
      {"--discard-cpu-slowed", "", "", "",
       "drop and retake a CPU-slowed repetition (see --cpu-threshold)",
       [](Options& o, const std::string&, const std::string&) { o.measure.discard_cpu_slowed = true; }},
      {"--cpu-retries", "", "N", "3", "with --discard-cpu-slowed: repetitions dropped per configuration at most",
       [](Options& o, const std::string& flag, const std::string& v) {
         o.measure.cpu_retries = static_cast<int>(parse_integer(flag, v, 0, 100));
       }},
      {"--energy-min-span", "", "SECONDS", "0",
       "meter each configuration's energy over at least this long: its kept repetitions, after an untimed "
       "stretch of the same work where they are shorter (NVML's energy counter changes about every 0.1 s, so "
       "longer spans give smaller uncertainties; 0: the kept repetitions alone; --preset energy: 1)",
       [](Options& o, const std::string& flag, const std::string& v) {
         o.measure.energy_min_span_s = parse_energy_span(flag, v);
       }},
      {"--seed", "", "N", "1", "random input seed",
       [](Options& o, const std::string& flag, const std::string& v) {
         o.measure.seed = static_cast<std::uint64_t>(parse_integer(flag, v, 0, INT64_MAX));
       }},
      {"--output", "", "PATH", "mpsbench-DATE-TIME.json, never overwriting an earlier file",
       "JSON results. An existing regular file at PATH is replaced (atomically, after every configuration); "
       "anything else there (a directory, a symbolic link, a FIFO, a device such as /dev/null) is refused (exit 2)",
       [](Options& o, const std::string&, const std::string& v) {
         if (v.empty()) throw UsageError("--output: empty path");
         o.output = v;
       }},
      {"--timeout", "", "SECONDS", "600", "abort the job (exit 3) when one configuration takes longer; 0: no limit",
       [](Options& o, const std::string& flag, const std::string& v) { o.timeout_s = parse_timeout(flag, v); }},
      {"--turns", "", "SOCKET", "",
       "take turns with the other jobs of an mpsbench-sweep round: one configuration at a time, asked for at the "
       "sweep's Unix socket SOCKET, asleep while another job works, without the GPU monitor (no clocks, energy or "
       "GPM activity; the sweep sets it; docs/measurement.md)",
       [](Options& o, const std::string&, const std::string& v) {
         if (v.empty()) throw UsageError("--turns: empty path");
         o.turns = v;
       }},
      {"--resume", "", "FILE", "",
       "continue the killed run whose results are in FILE (a regular file, not a link): keep its finished "
       "configurations, run the rest and write FILE (or --output) again",
       [](Options& o, const std::string&, const std::string& v) {
         if (v.empty()) throw UsageError("--resume: empty path");
         o.resume = v;
       }},
      {"--param", "", "KERNEL.NAME=VALUE", "",
       "a kernel parameter beyond precision and size (repeatable; see --list-kernels), e.g. "
       "--param inference.hidden=4096",
       [](Options& o, const std::string& flag, const std::string& v) { parse_param(flag, v, o.plan.kernel_params); }},
      {"--allreduce", "", "BYTES", "",
       "after every iteration, an MPI_Allreduce (sum of doubles) of BYTES (8, 64K, 4M, ...) over the active ranks "
       "on host buffers, as a data-parallel step does without NCCL; its time is reported separately and its "
       "result checked (not with --mode " + one_process_modes() + ")",
       [](Options& o, const std::string& flag, const std::string& v) {
         o.measure.allreduce_bytes = parse_allreduce_bytes(flag, v);
       }},
      {"--mix", "", "TENANT:RANKS,...", "",
       "ranks of one GPU run different kernels, TENANT = KERNEL[/PRECISION[/SIZE]] (default: the kernel's first "
       "precision and middle default size); the plan holds each tenant alone at its ranks, each at the total, and "
       "the mix, for the slowdown of each tenant",
       [](Options& o, const std::string& flag, const std::string& v) {
         o.plan.mix_tenants = parse_mix(flag, v);
         o.plan.mix = v;
       }},
      {"--preset", "", "NAME", "",
       "the options of presets/NAME.json in place (flags after it override them; see --list-presets)", nullptr},
      {"--list-kernels", "", "", "", "list kernels, precisions and default sizes",
       [](Options& o, const std::string&, const std::string&) { o.list_kernels = true; }},
      {"--list-presets", "", "", "", "list presets with their descriptions and options",
       [](Options& o, const std::string&, const std::string&) { o.list_presets = true; }},
      {"--list-modes", "", "", "",
       "list the sharing modes, one line each: name, mps=yes|no|any, one-process=yes|no, needs-gpu=yes|no and "
       "what it does",
       [](Options& o, const std::string&, const std::string&) { o.list_modes = true; }},
      {"--version", "", "", "", "print the version and git commit",
       [](Options& o, const std::string&, const std::string&) { o.show_version = true; }},
      {"--help", "-h", "", "", "this text",
       [](Options& o, const std::string&, const std::string&) { o.show_help = true; }},
  };
}

}  // namespace

const std::vector<OptionSpec>& option_table() {
  static const std::vector<OptionSpec> table = build_table();
  return table;
}

const OptionSpec* find_option(const std::string& flag) {
  for (const auto& spec : option_table()) {
    if (flag == spec.name || (*spec.alias != '\0' && flag == spec.alias)) return &spec;
  }
  return nullptr;
}

}  // namespace mpsb
