#include "results/result_json.hpp"

#include <cmath>

#include "measure/throttle.hpp"
#include "results/cpu_record.hpp"
#include "results/energy_json.hpp"
#include "results/timing_json.hpp"
#include "sharing/device.hpp"

namespace mpsb {
namespace {

using ojson = nlohmann::ordered_json;

ojson summary_json(const Summary& s) {
  return ojson{{"median", s.median}, {"min", s.min}, {"max", s.max}, {"samples", s.samples}};
}

ojson verification_json(const Verification& v) {
  return ojson{{"ok", v.ok},
               {"max_rel_error", std::isfinite(v.max_rel_error) ? ojson(v.max_rel_error) : ojson(nullptr)},
               {"tolerance", v.tolerance},
               {"checked_values", v.checked},
               {"detail", v.detail}};
}

ojson optional_number(const std::optional<double>& value) { return value ? ojson(*value) : ojson(nullptr); }

ojson details_json(const std::vector<std::pair<std::string, double>>& details) {
  ojson out = ojson::object();
  for (const auto& [name, value] : details) out[name] = value;
  return out;
}

const char* device_name(DeviceKind kind) { return kind == DeviceKind::gpu ? "gpu" : "cpu"; }

ojson optional_bool(const std::optional<bool>& value) { return value ? ojson(*value) : ojson(nullptr); }

ojson noise_json(const NoiseRecord& n) {
  return ojson{{"estimator", n.estimator},
               {"relative", optional_number(n.relative)},
               {"target", optional_number(n.target)},
               {"met", optional_bool(n.met)}};
}

ojson warmup_json(const std::optional<WarmupOutcome>& w) {
  if (!w) return nullptr;
  return ojson{{"seconds", w->seconds}, {"windows", w->windows}, {"stable", w->stable}};
}

ojson gpu_clocks_json(const GpuClockRecord& g) {
  ojson samples = ojson::array(), mean = ojson::array(), min = ojson::array(), events = ojson::array();
  for (const auto& w : g.windows) {
    samples.push_back(w.samples);
    mean.push_back(optional_number(w.mean_mhz));
    min.push_back(optional_number(w.min_mhz));
    events.push_back(clock_event_names(w.events));
  }
  return ojson{{"host", g.host},
               {"gpu_index", g.gpu_index},
               {"gpu_uuid", g.gpu_uuid},
               {"reference_sm_clock_mhz", optional_number(g.reference_mhz)},
               {"samples", samples},
               {"sm_clock_mhz", mean},
               {"min_sm_clock_mhz", min},
               {"events", events}};
}

ojson clocks_json(const std::optional<ClocksRecord>& c) {
  if (!c) return nullptr;
  ojson gpus = ojson::array();
  for (const auto& g : c->gpus) gpus.push_back(gpu_clocks_json(g));
  return ojson{{"source", c->source},
               {"note", c->note},
               {"threshold", c->threshold},
               {"reference_sm_clock_mhz", optional_number(c->reference_mhz)},
               {"affected_repetitions", c->affected_repetitions},
               {"discarded_repetitions", c->discarded_repetitions},
               {"repetition_affected", c->repetition_affected},
               {"gpus", gpus}};
}

ojson params_json(const KernelParams& params) {
  ojson out = ojson::object();
  for (const auto& [name, value] : params) out[name] = value;
  return out;
}

ojson latency_stats_json(const std::optional<stats::LatencyStats>& l) {
  if (!l) return nullptr;
  return ojson{{"count", l->count}, {"mean", l->mean}, {"p50", l->p50}, {"p95", l->p95}, {"p99", l->p99},
               {"max", l->max}};
}

ojson latency_json(const std::optional<stats::LatencyStats>& l) {
  if (!l) return nullptr;
  return ojson{{"source", "host_steady_clock"}, {"unit", "s"}, {"request", "one iteration"},
               {"overall", latency_stats_json(l)}};
}

ojson optional_summary(const std::optional<Summary>& s) { return s ? summary_json(*s) : ojson(nullptr); }

ojson collective_json(const std::optional<CollectiveRecord>& c) {
  if (!c) return nullptr;
  return ojson{{"operation", "MPI_Allreduce"},
               {"op", "MPI_SUM"},
               {"datatype", "MPI_DOUBLE"},
               {"bytes", c->bytes},
               {"communicator", "active ranks"},
               {"time_per_iteration_s", summary_json(c->time_per_iteration_s)},
               {"fraction_of_iteration", c->fraction_of_iteration},
               {"checked_values", c->checked_values},
               {"ok", c->ok},
               {"detail", c->detail}};
}

ojson tenants_json(const Result& r) {
  if (!r.config.is_mix()) return nullptr;
  ojson out = ojson::array();
  for (const auto& t : r.tenants) {
    out.push_back({{"kernel", t.spec.kernel},
                   {"precision", t.spec.precision},
                   {"size", t.spec.size},
                   {"params", params_json(t.spec.params)},
                   {"ranks_per_gpu", t.spec.ranks_per_gpu},
                   {"primary_metric", primary_metric_name(t.primary)},
                   {"primary_unit", t.unit},
                   {"throughput", summary_json(t.throughput)},
                   {"latency", latency_json(t.latency)},
                   {"alone_throughput", optional_number(t.alone_throughput)},
                   {"alone_latency_p99_s", optional_number(t.alone_latency_p99_s)},
                   {"slowdown", optional_number(t.slowdown)},
                   {"latency_p99_ratio", optional_number(t.latency_p99_ratio)}});
  }
  return out;
}

template <typename T>
ojson optional_value(const std::optional<T>& value) {
  return value ? ojson(*value) : ojson(nullptr);
}

ojson mig_json(const std::optional<MigRecord>& mig) {
  if (!mig) return nullptr;
  ojson instances = ojson::array();
  for (const auto& m : mig->instances) {
    instances.push_back({{"uuid", m.uuid},
                         {"gpu_instance_id", optional_value(m.gpu_instance_id)},
                         {"sm_count", optional_value(m.sm_count)},
                         {"memory_total_bytes", optional_value(m.memory_total_bytes)}});
  }
  return ojson{{"mode", mig->mode}, {"parent_uuid", mig->parent_uuid}, {"is_instance", mig->is_instance},
               {"instances", instances}};
}

ojson other_mps_json(const std::optional<std::vector<MpsProcess>>& found) {
  if (!found) return nullptr;
  ojson out = ojson::array();
  for (const auto& p : *found) {
    out.push_back({{"host", p.host}, {"pid", p.pid}, {"uid", p.uid}, {"process", p.process}});
  }
  return out;
}

ojson settings_json(const MeasureSettings& s) {
  return ojson{{"min_time_s", s.min_time_s},
               {"repetitions", s.repetitions},
               {"one_rank_repetitions", s.one_rank_repetitions ? ojson(*s.one_rank_repetitions) : ojson(nullptr)},
               {"seed", s.seed},
               {"warmup_time_s", s.warmup_time_s},
               {"max_noise", optional_number(s.max_noise)},
               {"max_time_s", optional_number(s.max_time_s)},
               {"discard_throttled", s.discard_throttled},
               {"throttle_retries", s.throttle_retries},
               {"clock_threshold", s.clock_threshold},
               {"allreduce_bytes", s.allreduce_bytes ? ojson(*s.allreduce_bytes) : ojson(nullptr)},
               {"energy_min_span_s", s.energy_min_span_s},
               {"cpu_threshold", s.cpu_threshold},
               {"discard_cpu_slowed", s.discard_cpu_slowed},
               {"cpu_retries", s.cpu_retries}};
}

}  // namespace

ojson plan_json(const std::vector<Config>& plan) {
  ojson out = ojson::array();
  for (const auto& c : plan) {
    out.push_back({{"kernel", c.kernel}, {"precision", c.precision}, {"size", c.size},
                   {"ranks_per_gpu", c.ranks_per_gpu}, {"params", params_json(c.params)}});
  }
  return out;
}

ojson to_json(const Context& c) {
  ojson gpus = ojson::array();
  for (const RankPlacement* r : c.placement.distinct_gpus()) {
    gpus.push_back({{"host", r->host},
                    {"index", r->gpu.index},
                    {"name", r->gpu.name},
                    {"uuid", r->gpu.uuid},
                    {"sm_count", r->gpu.sm_count},
                    {"memory_total_bytes", r->gpu.memory_total_bytes},
                    {"compute_mode", r->gpu.compute_mode},
                    {"sm_clock_peak_khz", r->gpu.sm_clock_peak_khz},
                    {"mig", mig_json(r->gpu.mig)}});
  }
  ojson ranks = ojson::array();
  for (const auto& r : c.placement.ranks) {
    ojson rank = {{"rank", r.rank},
                  {"host", r.host},
                  {"local_rank", r.local_rank},
                  {"device_slot", r.slot},
                  {"gpu_index", r.gpu.index},
                  {"gpu_uuid", r.gpu.uuid}};
    if (c.placement.kind == DeviceKind::gpu) {
      rank["mps_enabled"] = r.gpu.mps_enabled;
      rank["sm_count"] = r.gpu.sm_count;
      rank["memory_free_bytes"] = r.gpu.memory_free_bytes;
      rank["mps_active_thread_percentage"] =
          r.gpu.mps_active_thread_percentage ? ojson(*r.gpu.mps_active_thread_percentage) : ojson(nullptr);
      rank["context_memory_bytes"] =
          r.gpu.context_memory_bytes ? ojson(*r.gpu.context_memory_bytes) : ojson(nullptr);
      rank["mps_pinned_mem_limit_bytes"] = optional_value(r.gpu.mps_pinned_mem_limit_bytes);
    } else {
      rank["mps_enabled"] = nullptr;
      rank["sm_count"] = nullptr;
      rank["memory_free_bytes"] = nullptr;
      rank["mps_active_thread_percentage"] = nullptr;
      rank["context_memory_bytes"] = nullptr;
      rank["mps_pinned_mem_limit_bytes"] = nullptr;
    }
    ranks.push_back(std::move(rank));
  }
  ojson j{{"tool", "mpsbench"},
          {"version", c.version},
          {"git_commit", c.git_commit},
          {"git_dirty", c.git_dirty},
          {"date_utc", c.date_utc},
          {"argv", c.argv},
          {"hosts", c.hosts},
          {"mpi", {{"library_version", c.mpi_library_version}, {"world_size", c.world_size}}},
          {"mode_requested", to_string(c.mode)},
          {"device",
           {{"requested", c.device_requested},
            {"used", device_name(c.placement.kind)},
            {"note", c.device_note},
            {"devices", c.placement.device_count},
            {"max_ranks_per_device", c.placement.max_ranks_per_device}}},
          {"cuda",
           {{"driver_version", format_cuda_version(c.cuda.driver)},
            {"runtime_version", format_cuda_version(c.cuda.runtime)},
            {"cublas_version", c.cuda.cublas}}},
          {"settings", settings_json(c.settings)},
          {"gpus", gpus},
          {"ranks", ranks},
          {"mix", c.mix.empty() ? ojson(nullptr) : ojson(c.mix)},
          {"other_mps_processes", other_mps_json(c.other_mps_processes)},
          {"plan", plan_json(c.plan)}};
  if (c.timing) j["timing"] = job_timing_json(*c.timing);
  return j;
}

namespace {

// The identity and outcome of a configuration, the same for every status.
ojson result_header(const Result& r, const char* status, const ojson& error) {
  return ojson{{"kind", record_kind(r.config.kernel)},
               {"kernel", r.config.kernel},
               {"precision", r.config.precision},
               {"size", r.config.size},
               {"ranks_per_gpu", r.config.ranks_per_gpu},
               {"params", params_json(r.config.params)},
               {"device", device_name(r.device)},
               {"mode", r.mode},
               {"mps_active_thread_percentage",
                r.mps_active_thread_percentage ? ojson(*r.mps_active_thread_percentage) : ojson(nullptr)},
               {"status", status},
               {"error", error},
               {"active_ranks", r.active_ranks},
               {"instances_per_rank", r.instances_per_rank},
               {"devices", r.devices}};
}

// A failed configuration measured nothing: every measured field is null or
// empty, so no reader can mistake it for a (zero) throughput.
ojson failed_json(const Result& r) {
  ojson j = result_header(r, "failed", r.error);
  j["iterations_per_repetition"] = nullptr;
  j["repetitions"] = r.repetitions;
  j["work_per_iteration"] = nullptr;
  j["primary_metric"] = primary_metric_name(r.primary);
  j["primary_unit"] = nullptr;
  j["window_s"] = ojson::array();
  j["aggregate"] = nullptr;
  j["aggregate_cv"] = nullptr;
  j["noise"] = noise_json(r.noise);
  j["warmup"] = nullptr;
  j["clocks"] = nullptr;
  j["speedup_vs_one_rank_per_gpu"] = nullptr;
  j["jain_fairness"] = nullptr;
  j["verified"] = false;
  j["max_rel_error"] = nullptr;
  j["ranks"] = ojson::array();
  j["latency"] = nullptr;
  j["collective"] = nullptr;
  j["tenants"] = r.config.is_mix() ? ojson::array() : ojson(nullptr);
  j["energy"] = energy_json(r.energy);
  j["gpu_activity"] = activity_json(r.gpu_activity);
  j["timing"] = timing_json(r.timing);
  return j;
}

}  // namespace

const char* record_kind(const std::string& kernel) { return kernel == kMixKernel ? "mix" : "kernel"; }

ojson to_json(const Result& r) {
  if (r.failed()) return failed_json(r);
  ojson ranks = ojson::array();
  for (const auto& rr : r.ranks) {
    ranks.push_back({{"rank", rr.rank},
                     {"instance", rr.instance},
                     {"host", rr.host},
                     {"local_rank", rr.local_rank},
                     {"gpu_index", rr.gpu_index},
                     {"gpu_uuid", rr.gpu_uuid},
                     {"mps_enabled", r.device == DeviceKind::gpu ? ojson(rr.mps_enabled) : ojson(nullptr)},
                     {"sm_count", r.device == DeviceKind::gpu ? ojson(rr.sm_count) : ojson(nullptr)},
                     {"iteration_time_s", summary_json(rr.iteration_time_s)},
                     {"gpu_iteration_time_s",
                      rr.gpu_iteration_time_s ? summary_json(*rr.gpu_iteration_time_s) : ojson(nullptr)},
                     {"throughput_per_s", rr.throughput},
                     {"verification", verification_json(rr.verification)},
                     {"kernel_details", details_json(rr.details)},
                     {"latency_s", latency_stats_json(rr.latency_s)},
                     {"collective_time_s", optional_summary(rr.collective_time_s)},
                     {"tenant", rr.tenant ? ojson(*rr.tenant) : ojson(nullptr)}});
  }
  const std::string primary = primary_metric_name(r.primary);
  ojson j = result_header(r, "ok", nullptr);
  j.update(ojson{
               {"iterations_per_repetition", r.iterations},
               {"repetitions", r.repetitions},
               {"work_per_iteration",
                {{"flop", r.work.flops}, {"byte", r.work.bytes}, {"items", r.work.items},
                 {"item_unit", r.work.item_unit}}},
               {"primary_metric", primary},
               {"primary_unit", r.primary_unit()},
               {"window_s", r.window_s},
               {"aggregate",
                {{"flop_per_s", summary_json(r.flop_per_s)},
                 {"byte_per_s", summary_json(r.byte_per_s)},
                 {"item_per_s", summary_json(r.item_per_s)}}},
               {"aggregate_cv", r.cv},
               {"noise", noise_json(r.noise)},
               {"warmup", warmup_json(r.warmup)},
               {"clocks", clocks_json(r.clocks)},
               {"speedup_vs_one_rank_per_gpu", optional_number(r.speedup)},
               {"jain_fairness", r.jain_fairness},
               {"verified", r.verified},
               {"max_rel_error", optional_number(r.max_rel_error)},
               {"ranks", ranks},
               {"latency", latency_json(r.latency)},
               {"collective", collective_json(r.collective)},
               {"tenants", tenants_json(r)},
               {"energy", energy_json(r.energy)},
               {"gpu_activity", activity_json(r.gpu_activity)},
               {"timing", timing_json(r.timing)}});
  if (r.cpu) j["cpu"] = cpu_json(*r.cpu);
  return j;
}

ojson results_document(const ojson& context, const std::vector<ojson>& results, bool complete) {
  return ojson{{"schema", "mpsbench-results"},
               {"schema_version", kResultsSchemaVersion},
               {"complete", complete},
               {"context", context},
               {"results", results}};
}

}  // namespace mpsb
