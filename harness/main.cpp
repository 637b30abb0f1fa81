// mpsbench: run the sweep on every rank; rank 0 reports.
// Exit codes: 0 all verified, 1 a verification or a configuration failed (out
// of memory), 2 bad input, 3 fatal runtime error or --timeout (MPI_Abort, so
// no rank is left waiting).
#include <mpi.h>

#include <algorithm>
#include <cstdlib>
#include <cstdio>
#include <iostream>
#include <map>
#include <memory>
#include <optional>
#include <tuple>

#include "cli/listings.hpp"
#include "cli/options.hpp"
#include "measure/clock.hpp"
#include "measure/host_memory.hpp"
#include "measure/measure.hpp"
#include "measure/placement.hpp"
#include "measure/plan.hpp"
#include "measure/preflight.hpp"
#include "measure/timing.hpp"
#include "measure/watchdog.hpp"
#include "results/console_reporter.hpp"
#include "results/json_reporter.hpp"
#include "results/result.hpp"
#include "results/result_files.hpp"
#include "results/result_json.hpp"
#include "results/resume.hpp"
#include "runtime/atomic_file.hpp"
#include "runtime/build_info.hpp"
#include "runtime/check.hpp"
#include "runtime/fault_injection.hpp"
#include "runtime/mpi_context.hpp"
#include "runtime/turns.hpp"
#include "runtime/usage_error.hpp"
#include "sharing/device.hpp"
#include "sharing/gpu_contexts.hpp"
#include "sharing/mode_table.hpp"
#include "sharing/mps_memory_limit.hpp"

namespace mpsb {
namespace {

constexpr int kExitVerificationFailed = 1;
constexpr int kExitUsage = 2;

// Runs `check` on rank 0 only and makes its UsageError everyone's.
template <typename F>
void rank0_check(const MpiContext& ctx, F&& check) {
  std::string problem;
  if (ctx.rank == 0) {
    try {
      check();
    } catch (const std::exception& e) {
      problem = e.what();
    }
  }
  int length = static_cast<int>(problem.size());
  MPSB_MPI(MPI_Bcast(&length, 1, MPI_INT, 0, ctx.world));
  problem.resize(static_cast<std::size_t>(length));
  MPSB_MPI(MPI_Bcast(problem.data(), length, MPI_CHAR, 0, ctx.world));
  if (!problem.empty()) throw UsageError(problem);
}

struct DeviceDecision {
  DeviceKind kind = DeviceKind::cpu;
  std::string note;
};

// Every rank sees every rank's probe, so all decide alike.
DeviceDecision decide_device(const MpiContext& ctx, DeviceChoice choice, const GpuProbe& probe) {
  if (choice == DeviceChoice::cpu) return {DeviceKind::cpu, ""};
  const auto problems = allgather_strings(ctx.world, probe.problem);
  const auto hosts = allgather_strings(ctx.world, ctx.host);
  int with_gpu = 0;
  int first_bad = -1;
  for (int r = 0; r < ctx.size; ++r) {
    if (problems[r].empty()) {
      ++with_gpu;
    } else if (first_bad < 0) {
      first_bad = r;
    }
  }
  if (with_gpu == ctx.size) return {DeviceKind::gpu, ""};
  const std::string where = "rank " + std::to_string(first_bad) + " on " + hosts[first_bad] + ": " +
                            problems[first_bad];
  if (problems[first_bad].rfind("--gpus", 0) == 0) throw UsageError(problems[first_bad] + " on " + hosts[first_bad]);
  if (choice == DeviceChoice::gpu) throw UsageError("--device gpu: no usable GPU (" + where + ")");
  if (with_gpu > 0) {
    throw UsageError("--device auto: GPUs are usable on some hosts only (" + where +
                     "); choose --device cpu or --device gpu");
  }
  return {DeviceKind::cpu, "auto: no usable GPU, " + problems[0]};
}

// Ranks shared GPUs by time slicing only because no MPS daemon was there:
// the run measured half of the comparison it exists for.
bool without_mps_daemon(SharingMode mode, const Placement& placement) {
  if (placement.kind != DeviceKind::gpu || placement.max_ranks_per_device < 2) return false;
  // Set by mpsbench-sweep for its jobs: its timeslice job is half of the comparison already.
  if (const char* in_sweep = std::getenv("MPSBENCH_IN_SWEEP"); in_sweep != nullptr && *in_sweep != '\0') return false;
  // Only where the mode lets ranks run without MPS, one instance each, is the daemon's absence news.
  const SharingModeInfo& m = mode_info(mode);
  if (m.one_process || m.mps_client == Expect::yes) return false;
  return std::none_of(placement.ranks.begin(), placement.ranks.end(),
                      [](const RankPlacement& r) { return r.gpu.mps_enabled; });
}

std::string default_output_name() {
  std::string stamp = utc_timestamp_iso8601();  // 2026-11-21T14:41:00Z
  stamp.erase(std::remove_if(stamp.begin(), stamp.end(), [](char c) { return c == '-' || c == ':'; }),
              stamp.end());
  std::replace(stamp.begin(), stamp.end(), 'T', '-');
  if (!stamp.empty() && stamp.back() == 'Z') stamp.pop_back();
  return first_free_path("mpsbench-" + stamp + ".json");
}

// "configuration 3 (matmul fp32 size 40, 2 ranks/gpu)", as the timeout names it.
std::string describe_config(const Config& c, std::size_t index) {
  return "configuration " + std::to_string(index + 1) + " (" + c.kernel + " " + c.precision + " size " +
         std::to_string(c.size) + ", " + std::to_string(c.ranks_per_gpu) + " ranks/gpu)";
}

// Rank 0 reads --resume FILE and keeps its finished records (by plan index);
// every rank learns which configurations are done. Refusals are UsageErrors.
std::vector<std::optional<nlohmann::ordered_json>> load_resume(const MpiContext& ctx, const Options& opt,
                                                               const Context& context, std::vector<char>& done) {
  std::vector<std::optional<nlohmann::ordered_json>> slots(context.plan.size());
  done.assign(context.plan.size(), 0);
  if (opt.resume.empty()) return slots;
  rank0_check(ctx, [&] {
    const RunIdentity identity{context.plan, context.placement.kind == DeviceKind::gpu ? "gpu" : "cpu",
                               to_string(context.mode), context.world_size};
    slots = resumable_results(read_results_file(opt.resume), identity);
  });
  for (std::size_t i = 0; i < slots.size(); ++i) done[i] = slots[i] ? 1 : 0;
  MPSB_MPI(MPI_Bcast(done.data(), static_cast<int>(done.size()), MPI_CHAR, 0, ctx.world));
  return slots;
}

// `process_start`: now_seconds() on entering main(), before MPI_Init.
int run(int argc, char** argv, double process_start) {
  MpiContext ctx = make_mpi_context();
  JobTiming job;
  job.mpi_init_s = now_seconds() - process_start;
  Stopwatch phase;
  const std::vector<std::string> args(argv + 1, argv + argc);
  const Options opt = parse_options(args);
  init_fault_injection_from_environment();
  job.options_s = phase.lap();
  if (opt.prints_only()) {
    if (ctx.rank == 0) print_listings(std::cout, opt);
    free_mpi_context(ctx);
    return 0;
  }

  rank0_check(ctx, [&] { check_result_files(opt.output, opt.resume); });
  // mpsbench-sweep's turns (runtime/turns.hpp): from here on, every stretch of work that another job of
  // the round could feel (opening the GPUs, each repetition of each configuration, the final report) is a
  // turn; a configuration's first and last turns are taken and given here, the others in measure/team.cpp.
  Turns turns(ctx.world, ctx.rank, opt.turns);
  // Another user's MPS server would serialise this job behind theirs: looked for before any GPU work.
  std::optional<std::vector<MpsProcess>> other_mps;
  if (opt.device != DeviceChoice::cpu) other_mps = check_other_mps_users_everywhere(ctx, opt.other_mps_users);
  if (opt.device != DeviceChoice::cpu) check_thread_percentage_everywhere(ctx);
  const GpuProbe probe = opt.device == DeviceChoice::cpu ? GpuProbe{} : probe_gpus(opt.gpus);
  const DeviceDecision device = decide_device(ctx, opt.device, probe);
  job.preflight_s = phase.lap();
  GpuInfo gpu;
  {
    // Another job's contexts appearing meanwhile would count as this job's memory.
    Turns::Held opening(turns, -1);
    // In turn, not at once: each rank's context memory is the drop in free memory its context caused
    // (context.ranks[].context_memory_bytes, which the client ramp reports).
    if (device.kind == DeviceKind::gpu) gpu = open_gpus_in_turn(ctx, probe.usable);
    // Free memory once every rank's context exists: what the sweep can really use.
    MPSB_MPI(MPI_Barrier(ctx.world));
    if (device.kind == DeviceKind::gpu) gpu.memory_free_bytes = current_gpu_free_bytes();
  }
  job.gpu_open_s = phase.lap();

  std::vector<RankPlacement> ranks;
  for (const auto& text :
       allgather_strings(ctx.world, serialize(describe_rank(ctx.rank, ctx.host, ctx.local_rank, device.kind, gpu)))) {
    ranks.push_back(deserialize_rank(text));
  }
  const Placement placement = build_placement(device.kind, std::move(ranks));
  if (device.kind == DeviceKind::gpu) {
    verify_placement_sharing(opt.mode, placement);
    verify_pinned_mem_limits(pinned_mem_limits(placement));
  }
  const auto plan =
      build_plan(opt.plan, opt.mode, device.kind, placement.max_ranks_per_device, placement.device_count);
  if (mode_info(opt.mode).green_contexts) check_green_partitions(ctx, placement, plan);
  const std::vector<std::string> memory_warnings = preflight_memory(plan, placement);
  if (device.kind == DeviceKind::cpu) check_host_memory(ctx, plan);  // the OOM killer gives no second chance

  Context context;
  context.version = build_version();
  context.git_commit = build_git_commit();
  context.git_dirty = build_git_dirty();
  context.date_utc = utc_timestamp_iso8601();
  context.argv.assign(argv, argv + argc);
  std::vector<std::string> all_hosts;
  for (const auto& r : placement.ranks) {
    all_hosts.push_back(r.host);
    if (std::find(context.hosts.begin(), context.hosts.end(), r.host) == context.hosts.end()) {
      context.hosts.push_back(r.host);
    }
  }
  context.mpi_library_version = mpi_library_version();
  context.world_size = ctx.size;
  context.device_requested = to_string(opt.device);
  context.device_note = device.note;
  context.mode = opt.mode;
  context.cuda = cuda_versions();
  context.settings = opt.measure;
  context.mix = opt.plan.mix;
  context.other_mps_processes = other_mps;
  context.placement = placement;
  context.plan = plan;
  std::vector<char> done;
  auto resumed = load_resume(ctx, opt, context, done);
  const std::size_t resumed_count = static_cast<std::size_t>(std::count(done.begin(), done.end(), 1));
  job.placement_s = phase.lap();

  std::vector<std::unique_ptr<Reporter>> reporters;
  rank0_check(ctx, [&] {
    const std::string path = !opt.output.empty() ? opt.output
                             : !opt.resume.empty() ? opt.resume
                                                   : default_output_name();
    auto json = std::make_unique<JsonReporter>(path, resumed);
    try {
      json->report_context(context);  // proves the path is writable before any work
    } catch (const std::exception& e) {
      throw UsageError(std::string("--output: ") + e.what());
    }
    auto console = std::make_unique<ConsoleReporter>(std::cout, path, static_cast<int>(plan.size()));
    console->report_context(context);
    if (!opt.resume.empty()) {
      std::cout << "  resume: " << resumed_count << " of " << plan.size() << " configurations kept from "
                << opt.resume << "\n" << std::flush;
    }
    for (const auto& line : memory_warnings) std::cout << "  memory: " << line << "\n";
    std::cout << std::flush;
    reporters.push_back(std::move(console));
    reporters.push_back(std::move(json));
  });

  job.reporters_s = phase.lap();
  const double offset = clock_offset_to_root(ctx, all_hosts);
  job.clock_offset_s = phase.lap();
  // Kept for the whole job: each rank's workloads between configurations, and on the first rank of each
  // GPU that GPU's monitor (clocks, energy, GPM in the background; none in the sweep's turns, gpu_watch.hpp).
  JobState state;
  state.monitor = open_job_monitor(placement, ctx.rank, turns.enabled());
  state.turns = &turns;
  MPSB_MPI(MPI_Barrier(ctx.world));
  job.monitors_s = phase.lap();
  const bool streams = runs_instances_in_one_rank(opt.mode);  // streams or green

  std::map<std::tuple<std::string, std::string, std::int64_t>, double> one_rank_throughput;
  TenantBaselines alone;
  if (ctx.rank == 0) {
    one_rank_throughput = one_rank_baselines(resumed);
    alone = tenant_baselines(resumed);
  }
  bool all_verified = true;
  bool any_failed = false;
  Watchdog watchdog;
  for (std::size_t i = 0; i < plan.size(); ++i) {
    if (done[i]) continue;
    Turns::Held turn(turns, static_cast<long>(i));  // given back after the configuration's report
    const double config_start = now_seconds();
    const Config& config = plan[i];
    // Armed on every rank, idle ones too, at the same point of the sweep.
    watchdog.arm(opt.timeout_s, error_identity() + ": " + describe_config(config, i));
    // streams, green: the first rank of each GPU runs k instances; otherwise k ranks run one each.
    const ConfigSamples samples = measure_config(ctx, placement, config, static_cast<int>(i) + 1,
                                                 context.settings, streams ? 1 : config.ranks_per_gpu,
                                                 streams ? config.ranks_per_gpu : 1, offset, state);
    watchdog.disarm();
    if (ctx.rank != 0) continue;
    const auto key = std::make_tuple(config.kernel, config.precision, config.size);
    std::optional<double> baseline;
    if (const auto it = one_rank_throughput.find(key); it != one_rank_throughput.end()) baseline = it->second;
    Stopwatch reporting;
    Result result = summarize(samples, placement, opt.mode, context.settings, baseline, alone);
    if (config.ranks_per_gpu == 1 && !result.failed()) one_rank_throughput[key] = result.primary_summary().median;
    if (!config.is_mix() && !result.failed()) {
      alone[std::make_tuple(config.kernel, config.precision, config.size, config.ranks_per_gpu)] =
          TenantBaseline{result.primary_summary().median,
                         result.latency ? std::optional<double>(result.latency->p99) : std::nullopt};
    }
    any_failed = any_failed || result.failed();
    all_verified = all_verified && (result.failed() || result.verified);
    result.timing.report_s = reporting.seconds();  // so far: a killed job's file keeps these
    result.timing.wall_s = now_seconds() - config_start;
    for (auto& r : reporters) r->report_result(result, static_cast<int>(i) + 1, static_cast<int>(plan.size()));
    result.timing.report_s = reporting.seconds();
    result.timing.wall_s = now_seconds() - config_start;
    for (auto& r : reporters) r->report_timing(static_cast<int>(i) + 1, result.timing);
  }
  job.configurations_s = phase.lap();
  // The final report is work on rank 0's core too: the last turn, held until the process ends.
  turns.take(static_cast<long>(plan.size()));
  job.total_s = now_seconds() - process_start;
  for (auto& r : reporters) r->finish(job);
  if (ctx.rank == 0 && without_mps_daemon(opt.mode, placement)) {
    std::cout << "mpsbench: no MPS daemon was running: for the timeslice vs MPS comparison run "
                 "scripts/bootstrap.sh run (or harness/mpsbench-sweep)\n"
              << std::flush;
  }

  int exit_code = all_verified && !any_failed ? 0 : kExitVerificationFailed;
  MPSB_MPI(MPI_Bcast(&exit_code, 1, MPI_INT, 0, ctx.world));
  free_mpi_context(ctx);
  return exit_code;
}

}  // namespace
}  // namespace mpsb

int main(int argc, char** argv) {
  const double process_start = mpsb::now_seconds();
  // Only the main thread calls MPI; --mode streams adds worker threads.
  int provided = 0;
  if (MPI_Init_thread(&argc, &argv, MPI_THREAD_FUNNELED, &provided) != MPI_SUCCESS ||
      provided < MPI_THREAD_FUNNELED) {
    std::fprintf(stderr, "mpsbench: fatal: MPI_Init_thread(MPI_THREAD_FUNNELED) failed\n");
    return mpsb::kExitFatal;
  }
  int rank = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  int exit_code = 0;
  try {
    exit_code = mpsb::run(argc, argv, process_start);
  } catch (const mpsb::UsageError& e) {
    // Every rank reaches the same verdict; one line is enough.
    if (rank == 0) std::fprintf(stderr, "mpsbench: error: %s\n", e.what());
    exit_code = mpsb::kExitUsage;
  } catch (const mpsb::FatalError& e) {
    mpsb::abort_fatal(e.what());
  } catch (const std::exception& e) {
    mpsb::abort_fatal(mpsb::error_identity() + ": " + e.what());
  }
  MPI_Finalize();
  return exit_code;
}
