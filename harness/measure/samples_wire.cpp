// How one instance's samples travel to rank 0 (measure_config gathers them as
// text): a compact JSON form of RankSamples, and back.
#include <cmath>
#include <optional>

#include <nlohmann/json.hpp>

#include "measure/samples.hpp"

namespace mpsb {

namespace {

nlohmann::json optional_json(const std::optional<double>& value) {
  return value ? nlohmann::json(*value) : nlohmann::json(nullptr);
}

std::optional<double> optional_from(const nlohmann::json& value) {
  if (value.is_null()) return std::nullopt;
  return value.get<double>();
}

nlohmann::json clock_json(const GpuClockRecord& c) {
  nlohmann::json windows = nlohmann::json::array();
  for (const auto& w : c.windows) {
    windows.push_back({w.samples, w.missing, optional_json(w.mean_mhz), optional_json(w.min_mhz),
                       optional_json(w.max_mhz), w.events});
  }
  return {{"gpu_index", c.gpu_index}, {"gpu_uuid", c.gpu_uuid}, {"host", c.host},
          {"sampled", c.sampled},     {"note", c.note},         {"reference", optional_json(c.reference_mhz)},
          {"windows", windows}};
}

GpuClockRecord clock_from(const nlohmann::json& j) {
  GpuClockRecord c;
  c.gpu_index = j.at("gpu_index").get<int>();
  c.gpu_uuid = j.at("gpu_uuid").get<std::string>();
  c.host = j.at("host").get<std::string>();
  c.sampled = j.at("sampled").get<bool>();
  c.note = j.at("note").get<std::string>();
  c.reference_mhz = optional_from(j.at("reference"));
  for (const auto& w : j.at("windows")) {
    ClockWindow window;
    window.samples = w.at(0).get<int>();
    window.missing = w.at(1).get<int>();
    window.mean_mhz = optional_from(w.at(2));
    window.min_mhz = optional_from(w.at(3));
    window.max_mhz = optional_from(w.at(4));
    window.events = w.at(5).get<std::uint64_t>();
    c.windows.push_back(window);
  }
  return c;
}

nlohmann::json telemetry_json(const GpuTelemetry& t) {
  const GpmFigures& f = t.activity;
  return {t.gpu_index,
          t.gpu_uuid,
          t.host,
          {t.energy_available, t.energy_reason, t.mean_power_w, t.energy_span_s, t.energy_uncertainty,
           t.energy_ticks, t.energy_extended},
          {t.activity_available, t.activity_reason, optional_json(f.sm_active), optional_json(f.sm_occupancy),
           optional_json(f.dram_bw), optional_json(f.tensor_active), t.activity_span_s}};
}

GpuTelemetry telemetry_from(const nlohmann::json& j) {
  GpuTelemetry t;
  t.gpu_index = j.at(0).get<int>();
  t.gpu_uuid = j.at(1).get<std::string>();
  t.host = j.at(2).get<std::string>();
  const auto& e = j.at(3);
  t.energy_available = e.at(0).get<bool>();
  t.energy_reason = e.at(1).get<std::string>();
  t.mean_power_w = e.at(2).get<double>();
  t.energy_span_s = e.at(3).get<double>();
  t.energy_uncertainty = e.at(4).get<double>();
  t.energy_ticks = e.at(5).get<int>();
  t.energy_extended = e.at(6).get<bool>();
  const auto& a = j.at(4);
  t.activity_available = a.at(0).get<bool>();
  t.activity_reason = a.at(1).get<std::string>();
  t.activity = GpmFigures{optional_from(a.at(2)), optional_from(a.at(3)), optional_from(a.at(4)),
                          optional_from(a.at(5))};
  t.activity_span_s = a.at(6).get<double>();
  return t;
}

nlohmann::json cpu_json(const CpuSamples& c) {
  return {c.slowed, c.ratio, c.steal_s, c.run_delay_s, c.steal_known, c.run_delay_known, c.discarded,
          optional_json(c.reference_s), c.note};
}

CpuSamples cpu_from(const nlohmann::json& j) {
  CpuSamples c;
  c.slowed = j.at(0).get<std::vector<bool>>();
  c.ratio = j.at(1).get<std::vector<double>>();
  c.steal_s = j.at(2).get<std::vector<double>>();
  c.run_delay_s = j.at(3).get<std::vector<double>>();
  c.steal_known = j.at(4).get<bool>();
  c.run_delay_known = j.at(5).get<bool>();
  c.discarded = j.at(6).get<int>();
  c.reference_s = optional_from(j.at(7));
  c.note = j.at(8).get<std::string>();
  return c;
}

}  // namespace

std::string serialize(const RankSamples& s) {
  nlohmann::json j = {{"rank", s.rank},
                      {"instance", s.instance},
                      {"tenant", s.tenant},
                      {"iterations", s.iterations},
                      {"latency", s.latency_s},
                      {"collective", {s.collective_s, s.collective_checked, s.collective_wrong, s.collective_problem}},
                      {"start", s.start_s},
                      {"end", s.end_s},
                      {"gpu", s.gpu_s},
                      {"work", {s.work.flops, s.work.bytes, s.work.items, s.work.item_unit}},
                      {"verification",
                       {s.verification.ok, s.verification.max_rel_error, s.verification.tolerance,
                        s.verification.checked, s.verification.detail}},
                      {"details", s.details},
                      {"error", s.error},
                      {"warmup", {s.warmup.seconds, s.warmup.windows, s.warmup.stable}},
                      {"affected", s.affected},
                      {"discarded", s.discarded},
                      {"clocks", s.clocks ? clock_json(*s.clocks) : nlohmann::json(nullptr)},
                      {"cpu", s.cpu ? cpu_json(*s.cpu) : nlohmann::json(nullptr)},
                      {"telemetry", s.telemetry ? telemetry_json(*s.telemetry) : nlohmann::json(nullptr)},
                      {"timing",
                       {s.timing.setup_s, s.timing.first_run_s, s.timing.ready_s, s.timing.warmup_s,
                        s.timing.metering_s, s.timing.repetitions_s, s.timing.windows_s, s.timing.verification_s,
                        s.timing.reused}}};
  // Non-finite errors (a NaN result) are not valid JSON numbers: carry as text.
  if (!std::isfinite(s.verification.max_rel_error)) j["verification"][1] = "inf";
  return j.dump();
}

RankSamples deserialize_samples(const std::string& text) {
  const auto j = nlohmann::json::parse(text);
  RankSamples s;
  s.rank = j.at("rank").get<int>();
  s.instance = j.at("instance").get<int>();
  s.tenant = j.at("tenant").get<int>();
  s.iterations = j.at("iterations").get<std::int64_t>();
  s.latency_s = j.at("latency").get<std::vector<double>>();
  const auto& collective = j.at("collective");
  s.collective_s = collective.at(0).get<std::vector<double>>();
  s.collective_checked = collective.at(1).get<std::int64_t>();
  s.collective_wrong = collective.at(2).get<std::int64_t>();
  s.collective_problem = collective.at(3).get<std::string>();
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
  s.error = j.at("error").get<std::string>();
  const auto& warmup = j.at("warmup");
  s.warmup = WarmupOutcome{warmup.at(0).get<double>(), warmup.at(1).get<int>(), warmup.at(2).get<bool>()};
  s.affected = j.at("affected").get<std::vector<bool>>();
  s.discarded = j.at("discarded").get<int>();
  if (!j.at("clocks").is_null()) s.clocks = clock_from(j.at("clocks"));
  if (!j.at("cpu").is_null()) s.cpu = cpu_from(j.at("cpu"));
  if (!j.at("telemetry").is_null()) s.telemetry = telemetry_from(j.at("telemetry"));
  const auto& t = j.at("timing");
  s.timing = InstanceTiming{t.at(0).get<double>(), t.at(1).get<double>(), t.at(2).get<double>(),
                            t.at(3).get<double>(), t.at(4).get<double>(), t.at(5).get<double>(),
                            t.at(6).get<double>(), t.at(7).get<double>(), t.at(8).get<bool>()};
  return s;
}

}  // namespace mpsb
