#include "measure/measure.hpp"

#include <memory>
#include <thread>

#include <nlohmann/json.hpp>

#include "measure/instance.hpp"
#include "measure/team.hpp"
#include "runtime/check.hpp"
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
                                  int rank, double offset, std::int64_t* iterations) {
  Team team(instances, active, offset, config.is_mix());
  std::vector<RankSamples> samples(static_cast<std::size_t>(instances));
  // --mode green: one split of the GPU's SMs into disjoint groups, one per
  // instance, before the threads start (each then makes its own green context).
  std::unique_ptr<GreenPartition> partition;
  if (settings.green_contexts && placement.kind == DeviceKind::gpu) {
    const int gpu = placement.ranks[rank].gpu.index;
    MPSB_CUDA(cudaSetDevice(gpu));
    partition = std::make_unique<GreenPartition>(gpu, instances);
  }
  auto body = [&](int i) {
    try {
      samples[static_cast<std::size_t>(i)] =
          run_instance(team, i, placement, config, config_index, settings, rank, iterations, partition.get());
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

}  // namespace

ConfigSamples measure_config(const MpiContext& ctx, const Placement& placement, const Config& config,
                             int config_index, const MeasureSettings& settings, int active_slots,
                             int instances_per_rank, double clock_offset_s) {
  const bool active = placement.is_active(ctx.rank, active_slots);
  ActiveComm comm(ctx.world, active, ctx.rank);
  std::int64_t iterations = 0;
  nlohmann::json mine = nlohmann::json::array();
  if (active) {
    for (const auto& s : run_team(instances_per_rank, comm.get(), placement, config, config_index, settings,
                                  ctx.rank, clock_offset_s, &iterations)) {
      mine.push_back(nlohmann::json::parse(serialize(s)));
    }
  }
  // Inactive ranks wait here, asleep, for the active ones.
  quiet_barrier(ctx.world);
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
  return out;
}

}  // namespace mpsb
