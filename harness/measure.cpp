#include "measure.hpp"

#include <algorithm>
#include <cmath>

#include <nlohmann/json.hpp>

#include "check.hpp"
#include "clock.hpp"
#include "registry.hpp"

namespace mpsb {
namespace {

constexpr std::int64_t kMaxIterations = 1'000'000'000;

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

// One synchronized batch on every active rank; returns max(end) - min(start).
double timed_window(Workload& workload, std::int64_t iterations, MPI_Comm active, double offset) {
  MPSB_MPI(MPI_Barrier(active));
  const double start = now_seconds() + offset;
  for (std::int64_t i = 0; i < iterations; ++i) workload.run();
  workload.sync();
  const double end = now_seconds() + offset;
  double local[2] = {-start, end};
  double global[2] = {0, 0};
  MPSB_MPI(MPI_Allreduce(local, global, 2, MPI_DOUBLE, MPI_MAX, active));
  return global[1] + global[0];
}

// Grows the batch until one window lasts min_time on all active ranks
// together. Every rank sees the same reduced window, so all reach the same
// count without a broadcast. The batches double as warm-up.
std::int64_t calibrate_iterations(Workload& workload, MPI_Comm active, double min_time_s, double offset) {
  std::int64_t iterations = 1;
  double window = timed_window(workload, iterations, active, offset);
  while (window < min_time_s && iterations < kMaxIterations) {
    const double factor = window > 0 ? std::clamp(1.2 * min_time_s / window, 1.5, 100.0) : 100.0;
    iterations = std::min(kMaxIterations, static_cast<std::int64_t>(std::ceil(static_cast<double>(iterations) * factor)));
    window = timed_window(workload, iterations, active, offset);
  }
  return iterations;
}

RankSamples run_active(const Placement& placement, const Config& config, const MeasureSettings& settings,
                       cudaStream_t stream, double offset, MPI_Comm active, int rank, std::int64_t* iterations) {
  const KernelInfo& kernel = *find_kernel(config.kernel);
  WorkloadArgs args;
  args.device = placement.kind;
  args.gpu_ordinal = placement.ranks[rank].gpu.index;
  args.stream = stream;
  args.precision = config.precision;
  args.size = config.size;
  auto workload = kernel.make(args);
  workload->setup(settings.seed + 1000003ull * static_cast<std::uint64_t>(rank));

  // Warm-up: module loading, library heuristics and first-touch stay untimed.
  workload->run();
  workload->sync();
  *iterations = calibrate_iterations(*workload, active, settings.min_time_s, offset);

  RankSamples samples;
  samples.rank = rank;
  const bool on_gpu = placement.kind == DeviceKind::gpu;
  std::unique_ptr<EventPair> events = on_gpu ? std::make_unique<EventPair>() : nullptr;
  for (int r = 0; r < settings.repetitions; ++r) {
    MPSB_MPI(MPI_Barrier(active));
    const double start = now_seconds();
    if (events) events->record_start(stream);
    for (std::int64_t i = 0; i < *iterations; ++i) workload->run();
    if (events) events->record_end(stream);
    workload->sync();
    const double end = now_seconds();
    samples.start_s.push_back(start + offset);
    samples.end_s.push_back(end + offset);
    if (events) samples.gpu_s.push_back(events->elapsed_seconds());
  }
  samples.work = workload->work();
  samples.details = workload->details();
  samples.verification = workload->verify();
  return samples;
}

}  // namespace

ConfigSamples measure_config(const MpiContext& ctx, const Placement& placement, const Config& config,
                             const MeasureSettings& settings, cudaStream_t stream, double clock_offset_s) {
  const bool active = placement.is_active(ctx.rank, config.ranks_per_gpu);
  ActiveComm comm(ctx.world, active, ctx.rank);
  std::int64_t iterations = 0;
  std::string mine;
  if (active) {
    mine = serialize(run_active(placement, config, settings, stream, clock_offset_s, comm.get(), ctx.rank,
                                &iterations));
  }
  // Inactive ranks wait here for the active ones.
  const auto all = gather_strings(ctx.world, mine, 0);
  ConfigSamples out;
  out.config = config;
  out.iterations = iterations;
  for (const auto& text : all) {
    if (!text.empty()) out.ranks.push_back(deserialize_samples(text));
  }
  return out;
}

std::string serialize(const RankSamples& s) {
  nlohmann::json j = {{"rank", s.rank},
                      {"start", s.start_s},
                      {"end", s.end_s},
                      {"gpu", s.gpu_s},
                      {"work", {s.work.flops, s.work.bytes, s.work.items, s.work.item_unit}},
                      {"verification",
                       {s.verification.ok, s.verification.max_rel_error, s.verification.tolerance,
                        s.verification.checked, s.verification.detail}},
                      {"details", s.details}};
  // Non-finite errors (a NaN result) are not valid JSON numbers: carry as text.
  if (!std::isfinite(s.verification.max_rel_error)) j["verification"][1] = "inf";
  return j.dump();
}

RankSamples deserialize_samples(const std::string& text) {
  const auto j = nlohmann::json::parse(text);
  RankSamples s;
  s.rank = j.at("rank").get<int>();
  s.start_s = j.at("start").get<std::vector<double>>();
  s.end_s = j.at("end").get<std::vector<double>>();
  s.gpu_s = j.at("gpu").get<std::vector<double>>();
  const auto& w = j.at("work");
  s.work = Work{w[0].get<double>(), w[1].get<double>(), w[2].get<double>(), w[3].get<std::string>()};
  const auto& v = j.at("verification");
  s.verification.ok = v[0].get<bool>();
  s.verification.max_rel_error = v[1].is_string() ? INFINITY : v[1].get<double>();
  s.verification.tolerance = v[2].get<double>();
  s.verification.checked = v[3].get<std::int64_t>();
  s.verification.detail = v[4].get<std::string>();
  s.details = j.at("details").get<std::vector<std::pair<std::string, double>>>();
  return s;
}

}  // namespace mpsb
