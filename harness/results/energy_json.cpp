#include "results/energy_json.hpp"

namespace mpsb {
namespace {

using ojson = nlohmann::ordered_json;

ojson percent(const std::optional<double>& value) { return value ? ojson(*value) : ojson(nullptr); }

void add_figures(ojson& j, const GpmFigures& f) {
  j["sm_active"] = percent(f.sm_active);
  j["sm_occupancy"] = percent(f.sm_occupancy);
  j["dram_bw"] = percent(f.dram_bw);
  j["tensor_active"] = percent(f.tensor_active);
}

}  // namespace

ojson gpu_energy_json(const GpuTelemetry& g) {
  ojson j{{"gpu_index", g.gpu_index}, {"gpu_uuid", g.gpu_uuid}, {"host", g.host},
          {"available", g.energy_available}};
  if (g.energy_available) {
    j["mean_power_w"] = g.mean_power_w;
    j["span_s"] = g.energy_span_s;
    j["uncertainty"] = g.energy_uncertainty;
    j["counter_updates"] = g.energy_ticks;
    j["from_warmup"] = g.energy_extended;
  } else {
    j["reason"] = g.energy_reason;
  }
  return j;
}

ojson gpu_activity_json(const GpuTelemetry& g) {
  ojson j{{"gpu_index", g.gpu_index}, {"gpu_uuid", g.gpu_uuid}, {"host", g.host},
          {"available", g.activity_available}};
  if (g.activity_available) {
    add_figures(j, g.activity);
    j["span_s"] = g.activity_span_s;
  }
  if (!g.activity_reason.empty()) j["reason"] = g.activity_reason;
  return j;
}

ojson energy_json(const EnergyRecord& e) {
  ojson j{{"available", e.available}};
  if (e.available) {
    j["joules"] = e.joules;
    j["joules_per_unit"] = e.joules_per_unit;
    j["unit"] = e.unit;
    j["mean_power_w"] = e.mean_power_w;
    j["span_s"] = e.span_s;
    j["uncertainty"] = e.uncertainty;
    j["method"] = e.method;
  } else {
    j["reason"] = e.reason;
  }
  ojson gpus = ojson::array();
  for (const auto& g : e.per_gpu) gpus.push_back(gpu_energy_json(g));
  j["per_gpu"] = gpus;
  return j;
}

ojson activity_json(const ActivityRecord& a) {
  ojson j{{"available", a.available}};
  if (a.available) add_figures(j, a.mean);
  if (!a.reason.empty()) j["reason"] = a.reason;
  ojson gpus = ojson::array();
  for (const auto& g : a.per_gpu) gpus.push_back(gpu_activity_json(g));
  j["per_gpu"] = gpus;
  return j;
}

}  // namespace mpsb
