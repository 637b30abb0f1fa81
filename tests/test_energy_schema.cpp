// The records of issues 27 and 28 against schema/mpsbench-results.schema.json:
// a result's energy, gpu_activity and timing, the context's timing, whether
// the figures are there or say why not, and what mpsbench-meter prints.
#include <gtest/gtest.h>

#include "results/energy_json.hpp"
#include "results/result.hpp"
#include "results/result_json.hpp"
#include "results/timing_json.hpp"
#include "results_schema.hpp"

namespace mpsb {
namespace {

// The document with one definition in place of the whole: {"$ref": "#/definitions/NAME"}.
std::string errors_as(const char* definition, const nlohmann::json& value) {
  nlohmann::json s = results_schema();
  for (const char* key : {"required", "properties", "type", "additionalProperties"}) s.erase(key);
  s["$ref"] = std::string("#/definitions/") + definition;
  return schema_errors(s, value);
}

ConfigSamples one_gpu_samples(bool with_energy) {
  ConfigSamples s;
  s.config = Config{"matmul", "fp32", 512, 1, {}, {}};
  s.iterations = 100;
  RankSamples rs;
  rs.config = s.config;
  rs.iterations = 100;
  rs.start_s = {10.0, 11.0, 12.0};
  rs.end_s = {10.5, 11.5, 12.5};
  rs.work = Work{2.0 * 512 * 512 * 512, 3.0 * 512 * 512 * 4, 0, ""};
  rs.verification = Verification{true, 1e-7, 1e-5, 1028, ""};
  rs.warmup = WarmupOutcome{0.31, 6, true};
  rs.affected = {false, false, false};
  GpuTelemetry t;
  t.gpu_index = 0;
  t.gpu_uuid = "GPU-18f96ea3-1bcf-7253-29db-c89d0ab4e1e8";
  t.host = "gpu01";
  t.energy_available = with_energy;
  t.energy_reason = with_energy ? "" : "nvmlDeviceGetTotalEnergyConsumption: Not Supported (3)";
  t.mean_power_w = 400;
  t.energy_span_s = 1.4;
  t.energy_uncertainty = 0.012;
  t.energy_ticks = 15;
  t.activity_available = true;
  t.activity = GpmFigures{97.0, 25.0, 12.0, std::nullopt};
  t.activity_span_s = 1.5;
  rs.telemetry = t;
  s.ranks.push_back(rs);
  s.timing.setup_s = 0.2;
  s.timing.warmup_s = 0.4;
  s.timing.repetitions_s = 1.6;
  s.timing.windows_s = 1.5;
  s.timing.wall_s = 2.5;
  return s;
}

Placement one_gpu() {
  GpuInfo g;
  g.index = 0;
  g.uuid = "GPU-18f96ea3-1bcf-7253-29db-c89d0ab4e1e8";
  g.sm_count = 132;
  return build_placement(DeviceKind::gpu, {describe_rank(0, "gpu01", 0, DeviceKind::gpu, g)});
}

TEST(EnergySchema, ResultsWithAndWithoutEnergyAreValid) {
  MeasureSettings settings;
  settings.repetitions = 3;
  for (const bool energy : {true, false}) {
    const Result r = summarize(one_gpu_samples(energy), one_gpu(), SharingMode::automatic, settings, std::nullopt);
    EXPECT_EQ(r.energy.available, energy) << r.energy.reason;
    const auto j = nlohmann::json::parse(to_json(r).dump());
    EXPECT_EQ(errors_as("result", j), "");
    EXPECT_EQ(errors_as("energy", j["energy"]), "");
    EXPECT_EQ(errors_as("gpu_activity", j["gpu_activity"]), "");
    EXPECT_EQ(errors_as("timing", j["timing"]), "");
    if (energy) {
      // 400 W over 1.5 s kept, per 3 x 100 x 2 x 512^3 flop.
      EXPECT_DOUBLE_EQ(j["energy"]["joules"].get<double>(), 600.0);
      EXPECT_DOUBLE_EQ(j["energy"]["joules_per_unit"].get<double>(), 600.0 / (300 * 2.0 * 512 * 512 * 512));
      EXPECT_EQ(j["energy"]["unit"], "J/FLOP");
    } else {
      EXPECT_FALSE(j["energy"].contains("joules"));
    }
    EXPECT_TRUE(j["gpu_activity"]["tensor_active"].is_null());
  }
}

TEST(EnergySchema, BrokenRecordsAreRefused) {
  nlohmann::json e = {{"available", true}, {"per_gpu", nlohmann::json::array()}};
  EXPECT_NE(errors_as("energy", e), "") << "available without joules";
  e = {{"available", false}};
  EXPECT_NE(errors_as("energy", e), "") << "unavailable without a reason";
  nlohmann::json a = {{"available", true}, {"sm_active", 140}, {"sm_occupancy", 1}, {"dram_bw", 1},
                      {"tensor_active", 1}};
  EXPECT_NE(errors_as("gpu_activity", a), "") << "above 100%";
  nlohmann::json t = {{"setup_s", -1}};
  EXPECT_NE(errors_as("timing", t), "");
}

TEST(EnergySchema, ContextTimingAndMeterLinesAreValid) {
  JobTiming job;
  job.total_s = 12;
  job.configurations_s = 10;
  EXPECT_EQ(errors_as("job_timing", nlohmann::json::parse(job_timing_json(job).dump())), "");
  const nlohmann::json line = nlohmann::json::parse(R"({"span_s": 2.0,
      "energy": {"available": true, "joules": 800.0, "mean_power_w": 400.0, "span_s": 1.9, "uncertainty": 0.01,
                 "method": "nvml_energy_counter"},
      "gpu_activity": {"available": false, "reason": "GPM not supported on this GPU"},
      "gpus": [{"uuid": "GPU-x", "index": 0,
                "energy": {"available": true, "joules": 800.0, "mean_power_w": 400.0, "span_s": 1.9,
                           "uncertainty": 0.01, "method": "nvml_energy_counter"},
                "gpu_activity": {"available": false, "reason": "GPM not supported on this GPU"}}]})");
  EXPECT_EQ(errors_as("meter_span", line), "");
}

}  // namespace
}  // namespace mpsb
