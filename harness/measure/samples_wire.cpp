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
                      {"clocks", s.clocks ? clock_json(*s.clocks) : nlohmann::json(nullptr)}};
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
  return s;
}

}  // namespace mpsb
