#include "measure/placement.hpp"

#include <algorithm>
#include <map>

#include <nlohmann/json.hpp>

namespace mpsb {

int Placement::active_count(int ranks_per_device) const {
  int count = 0;
  for (const auto& r : ranks) count += r.slot < ranks_per_device ? 1 : 0;
  return count;
}

std::vector<const RankPlacement*> Placement::distinct_gpus() const {
  std::vector<const RankPlacement*> out;
  if (kind != DeviceKind::gpu) return out;
  for (const auto& r : ranks) {
    if (r.slot == 0) out.push_back(&r);
  }
  return out;
}

namespace {

template <typename T>
nlohmann::json optional_json(const std::optional<T>& value) {
  return value ? nlohmann::json(*value) : nlohmann::json(nullptr);
}

template <typename T>
std::optional<T> optional_from(const nlohmann::json& j) {
  if (j.is_null()) return std::nullopt;
  return j.get<T>();
}

nlohmann::json mig_json(const std::optional<MigRecord>& mig) {
  if (!mig) return nullptr;
  nlohmann::json instances = nlohmann::json::array();
  for (const auto& m : mig->instances) {
    instances.push_back({{"uuid", m.uuid},
                         {"gpu_instance_id", optional_json(m.gpu_instance_id)},
                         {"sm_count", optional_json(m.sm_count)},
                         {"memory_total_bytes", optional_json(m.memory_total_bytes)}});
  }
  return {{"mode", mig->mode}, {"parent_uuid", mig->parent_uuid}, {"is_instance", mig->is_instance},
          {"instances", instances}};
}

std::optional<MigRecord> mig_from_json(const nlohmann::json& j) {
  if (j.is_null()) return std::nullopt;
  MigRecord mig;
  mig.mode = j.at("mode").get<std::string>();
  mig.parent_uuid = j.at("parent_uuid").get<std::string>();
  mig.is_instance = j.at("is_instance").get<bool>();
  for (const auto& m : j.at("instances")) {
    MigInstance instance;
    instance.uuid = m.at("uuid").get<std::string>();
    instance.gpu_instance_id = optional_from<int>(m.at("gpu_instance_id"));
    instance.sm_count = optional_from<int>(m.at("sm_count"));
    instance.memory_total_bytes = optional_from<std::uint64_t>(m.at("memory_total_bytes"));
    mig.instances.push_back(instance);
  }
  return mig;
}

}  // namespace

RankPlacement describe_rank(int rank, const std::string& host, int local_rank, DeviceKind kind,
                            const GpuInfo& gpu) {
  RankPlacement p;
  p.rank = rank;
  p.host = host;
  p.local_rank = local_rank;
  p.gpu = gpu;
  // A UUID names a GPU uniquely even across hosts; the CPU device is the host.
  p.device_key = kind == DeviceKind::gpu ? gpu.uuid : host + ":cpu";
  return p;
}

std::string serialize(const RankPlacement& r) {
  nlohmann::json j = {{"rank", r.rank},
                      {"host", r.host},
                      {"local_rank", r.local_rank},
                      {"device_key", r.device_key},
                      {"gpu",
                       {{"index", r.gpu.index},
                        {"name", r.gpu.name},
                        {"uuid", r.gpu.uuid},
                        {"sm_count", r.gpu.sm_count},
                        {"memory_total_bytes", r.gpu.memory_total_bytes},
                        {"memory_free_bytes", r.gpu.memory_free_bytes},
                        {"compute_mode", r.gpu.compute_mode},
                        {"sm_clock_peak_khz", r.gpu.sm_clock_peak_khz},
                        {"mps_enabled", r.gpu.mps_enabled},
                        {"mps_active_thread_percentage", r.gpu.mps_active_thread_percentage
                                                             ? nlohmann::json(*r.gpu.mps_active_thread_percentage)
                                                             : nlohmann::json(nullptr)},
                        {"context_memory_bytes", r.gpu.context_memory_bytes
                                                     ? nlohmann::json(*r.gpu.context_memory_bytes)
                                                     : nlohmann::json(nullptr)},
                        {"mps_pinned_mem_limit_bytes", r.gpu.mps_pinned_mem_limit_bytes
                                                           ? nlohmann::json(*r.gpu.mps_pinned_mem_limit_bytes)
                                                           : nlohmann::json(nullptr)},
                        {"mig", mig_json(r.gpu.mig)}}}};
  return j.dump();
}

RankPlacement deserialize_rank(const std::string& text) {
  const auto j = nlohmann::json::parse(text);
  RankPlacement r;
  r.rank = j.at("rank").get<int>();
  r.host = j.at("host").get<std::string>();
  r.local_rank = j.at("local_rank").get<int>();
  r.device_key = j.at("device_key").get<std::string>();
  const auto& g = j.at("gpu");
  r.gpu.index = g.at("index").get<int>();
  r.gpu.name = g.at("name").get<std::string>();
  r.gpu.uuid = g.at("uuid").get<std::string>();
  r.gpu.sm_count = g.at("sm_count").get<int>();
  r.gpu.memory_total_bytes = g.at("memory_total_bytes").get<std::uint64_t>();
  r.gpu.memory_free_bytes = g.at("memory_free_bytes").get<std::uint64_t>();
  r.gpu.compute_mode = g.at("compute_mode").get<std::string>();
  r.gpu.sm_clock_peak_khz = g.at("sm_clock_peak_khz").get<int>();
  r.gpu.mps_enabled = g.at("mps_enabled").get<bool>();
  if (!g.at("mps_active_thread_percentage").is_null()) {
    r.gpu.mps_active_thread_percentage = g.at("mps_active_thread_percentage").get<int>();
  }
  if (!g.at("context_memory_bytes").is_null()) {
    r.gpu.context_memory_bytes = g.at("context_memory_bytes").get<std::uint64_t>();
  }
  if (!g.at("mps_pinned_mem_limit_bytes").is_null()) {
    r.gpu.mps_pinned_mem_limit_bytes = g.at("mps_pinned_mem_limit_bytes").get<std::uint64_t>();
  }
  r.gpu.mig = mig_from_json(g.at("mig"));
  return r;
}

Placement build_placement(DeviceKind kind, std::vector<RankPlacement> ranks) {
  std::sort(ranks.begin(), ranks.end(), [](const auto& a, const auto& b) { return a.rank < b.rank; });
  std::map<std::string, int> ranks_on_device;
  for (auto& r : ranks) r.slot = ranks_on_device[r.device_key]++;
  Placement placement;
  placement.kind = kind;
  placement.ranks = std::move(ranks);
  placement.device_count = static_cast<int>(ranks_on_device.size());
  int fewest = placement.ranks.empty() ? 0 : static_cast<int>(placement.ranks.size());
  int most = 0;
  for (const auto& [key, count] : ranks_on_device) {
    fewest = std::min(fewest, count);
    most = std::max(most, count);
  }
  placement.max_ranks_per_device = fewest;
  placement.uneven = most != fewest;
  return placement;
}

}  // namespace mpsb
