#include "measure/measure.hpp"

#include <algorithm>
#include <cstdio>
#include <memory>
#include <optional>
#include <thread>

#include <nlohmann/json.hpp>

#include "measure/clock.hpp"
#include "measure/instance.hpp"
#include "measure/team.hpp"
#include "runtime/check.hpp"
#include "runtime/cpu_affinity.hpp"
#include "sharing/green_context.hpp"

namespace mpsb {
namespace {

// Owns the active ranks' communicator of one configuration.
class ActiveComm {
 public:
  ActiveComm(MPI_Comm world, bool active, int rank) {
    MPSB_MPI(MPI_Comm_split(world, active ? 0 : MPI_UNDEFINED, rank, &comm_));
    if (comm_ != MPI_COMM_NULL) MPSB_MPI(MPI_Comm_set_errhandler(comm_, MPI_ERRORS_RETURN));
  }
  ~ActiveComm() {
    if (comm_ != MPI_COMM_NULL) MPI_Comm_free(&comm_);
  }
  ActiveComm(const ActiveComm&) = delete;
  ActiveComm& operator=(const ActiveComm&) = delete;
  MPI_Comm get() const { return comm_; }

 private:
  MPI_Comm comm_ = MPI_COMM_NULL;
};

std::vector<RankSamples> run_team(int instances, MPI_Comm active, const Placement& placement,
                                  const Config& config, int config_index, const MeasureSettings& settings,
                                  int rank, double offset, double config_start, std::int64_t* iterations,
                                  JobState& job) {
  Team team(instances, active, offset, config.is_mix());
  team.config_start = config_start;
  team.turns = job.turns;
  std::vector<RankSamples> samples(static_cast<std::size_t>(instances));
  // --mode green: one split of the GPU's SMs into disjoint groups, one per
  // instance, before the threads start (each then makes its own green context).
  std::unique_ptr<GreenPartition> partition;
  if (settings.green_contexts && placement.kind == DeviceKind::gpu) {
    const int gpu = placement.ranks[rank].gpu.index;
    MPSB_CUDA(cudaSetDevice(gpu));
    partition = std::make_unique<GreenPartition>(gpu, instances);
  }
  // One process, k instance threads (--mode streams, green): where the launcher bound the rank to fewer
  // CPUs than it has instances (Open MPI binds to a core when np <= 2), the threads would take turns on
  // them and the host side of every instance would be measured k times slower than a rank's on a core of
  // its own. Each instance gets the node's CPUs, as k ranks would get a core each.
  const bool spread = instances > 1 && allowed_cpus() < instances;
  if (spread && !job.said_spread && rank == 0) {
    std::fprintf(stderr, "mpsbench: note: %d instance threads and %d CPU(s) in the launcher's binding: the "
                 "instances run on every CPU of the node, as that many ranks would each on a core (mpirun "
                 "--bind-to none gives them that itself)\n",
                 instances, allowed_cpus());
    job.said_spread = true;
  }
  auto body = [&](int i) {
    std::optional<WideAffinity> wide;
    if (spread) wide.emplace();
    try {
      // --mode green makes its green contexts per configuration: nothing is kept.
      CachedInstance* kept = settings.green_contexts ? nullptr : &job.cache.slot(i);
      samples[static_cast<std::size_t>(i)] =
          run_instance(InstanceRun{team, i, placement, config, config_index, settings, rank, iterations,
                                   partition.get(), kept, i == 0 ? job.monitor.get() : nullptr, &job.cpu.of(i)});
    } catch (const FatalError& e) {
      // A failure on any thread ends the job: the other threads and ranks
      // would otherwise wait at a barrier forever.
      abort_fatal(e.what());
    } catch (const std::exception& e) {
      abort_fatal(error_identity() + ": " + e.what());
    }
  };
  if (instances == 1) {
    body(0);
    return samples;
  }
  std::vector<std::thread> threads;
  for (int i = 1; i < instances; ++i) threads.emplace_back(body, i);
  body(0);  // instance 0 stays on the thread that owns MPI
  for (auto& t : threads) t.join();
  return samples;
}

// Rank 0's view of the configuration's phases (timing.hpp): its first
// instance's timeline, which waits for every other instance at each step, and
// the slowest instance's own setup.
ConfigTiming config_timing(const ConfigSamples& out, const InstanceTiming& mine, double until_verified,
                           double gather_s) {
  ConfigTiming t;
  for (const auto& s : out.ranks) {
    t.setup_s = std::max(t.setup_s, s.timing.setup_s);
    t.reused_instances += s.timing.reused ? 1 : 0;
  }
  t.instances = static_cast<int>(out.ranks.size());
  t.first_run_s = std::max(0.0, mine.ready_s - t.setup_s);
  t.warmup_s = mine.warmup_s;
  t.metering_s = mine.metering_s;
  t.repetitions_s = mine.repetitions_s;
  t.windows_s = mine.windows_s;
  t.verification_s =
      std::max(0.0, until_verified - mine.ready_s - mine.warmup_s - mine.metering_s - mine.repetitions_s);
  t.gather_s = gather_s;
  return t;
}

}  // namespace

ConfigSamples measure_config(const MpiContext& ctx, const Placement& placement, const Config& config,
                             int config_index, const MeasureSettings& settings, int active_slots,
                             int instances_per_rank, double clock_offset_s, JobState& job) {
  const double start = now_seconds();
  const bool active = placement.is_active(ctx.rank, active_slots);
  MeasureSettings own = settings;  // --one-rank-repetitions: the count at one rank per GPU
  if (config.ranks_per_gpu == 1 && settings.one_rank_repetitions) own.repetitions = *settings.one_rank_repetitions;
  job.cache.prepare(config_of_slot(config, placement.ranks[ctx.rank].slot), instances_per_rank);
  job.cpu.prepare(instances_per_rank);
  ActiveComm comm(ctx.world, active, ctx.rank);
  std::int64_t iterations = 0;
  nlohmann::json mine = nlohmann::json::array();
  InstanceTiming first;  // this rank's first instance (rank 0's is the timeline timing.hpp describes)
  if (active) {
    const auto samples = run_team(instances_per_rank, comm.get(), placement, config, config_index, own,
                                  ctx.rank, clock_offset_s, start, &iterations, job);
    first = samples.front().timing;
    for (const auto& s : samples) mine.push_back(nlohmann::json::parse(serialize(s)));
  }
  // Inactive ranks wait here, asleep, for the active ones.
  quiet_barrier(ctx.world);
  const double verified = now_seconds();
  const auto all = gather_strings(ctx.world, active ? mine.dump() : std::string(), 0);
  ConfigSamples out;
  out.config = config;
  out.instances_per_rank = instances_per_rank;
  out.iterations = iterations;
  for (const auto& text : all) {
    if (text.empty()) continue;
    for (const auto& s : nlohmann::json::parse(text)) {
      out.ranks.push_back(deserialize_samples(s.dump()));
      out.ranks.back().config = config_of_slot(config, placement.ranks[out.ranks.back().rank].slot);
      const std::string& error = out.ranks.back().error;
      // The instances of a --mode streams team usually fail alike: say it once.
      if (!error.empty() && out.error.find(error) == std::string::npos) {
        out.error += (out.error.empty() ? "" : "; ") + error;
      }
    }
  }
  if (ctx.rank == 0) out.timing = config_timing(out, first, verified - start, now_seconds() - verified);
  return out;
}

}  // namespace mpsb
