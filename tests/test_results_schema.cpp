// The JSON the reporters write, checked against schema/mpsbench-results.schema.json.
#include <gtest/gtest.h>

#include "results/result.hpp"
#include "results/result_json.hpp"
#include "results_schema.hpp"

namespace mpsb {
namespace {

Placement two_ranks_one_gpu() {
  std::vector<RankPlacement> ranks;
  for (int r = 0; r < 2; ++r) {
    GpuInfo g;
    g.index = 0;
    g.name = "NVIDIA H100 80GB HBM3";
    g.uuid = "GPU-18f96ea3-1bcf-7253-29db-c89d0ab4e1e8";
    g.sm_count = 132;
    g.memory_total_bytes = 85520809984ull;
    g.memory_free_bytes = 84000000000ull;
    g.compute_mode = "DEFAULT";
    g.sm_clock_peak_khz = 1980000;
    g.mps_enabled = r == 1;
    ranks.push_back(describe_rank(r, "gpu01", r, DeviceKind::gpu, g));
  }
  return build_placement(DeviceKind::gpu, ranks);
}

Context sample_context(const Placement& placement) {
  Context c;
  c.version = "0.1.0";
  c.git_commit = "0123456789abcdef0123456789abcdef01234567";
  c.date_utc = "2026-11-21T14:41:00Z";
  c.argv = {"mpsbench", "--kernel", "matmul"};
  c.hosts = {"gpu01"};
  c.mpi_library_version = "Open MPI v4.1.6";
  c.world_size = 2;
  c.device_requested = "auto";
  c.cuda = CudaVersions{13000, 13000, 130100};
  c.placement = placement;
  return c;
}

// The settings the samples below were taken with: three fixed repetitions.
MeasureSettings three_repetitions() {
  MeasureSettings s;
  s.repetitions = 3;
  return s;
}

ConfigSamples sample_measurement(int ranks_per_gpu, bool verified) {
  ConfigSamples s;
  s.config = Config{"matmul", "fp32", 512, ranks_per_gpu, {}, {}};
  s.iterations = 100;
  for (int r = 0; r < ranks_per_gpu; ++r) {
    RankSamples rs;
    rs.rank = r;
    rs.config = s.config;
    rs.iterations = s.iterations;
    rs.start_s = {10.0, 11.0, 12.0};
    rs.end_s = {10.5, 11.4 + 0.01 * r, 12.6};
    rs.gpu_s = {0.49, 0.39, 0.59};
    rs.work = Work{2.0 * 512 * 512 * 512, 3.0 * 512 * 512 * 4, 0, ""};
    rs.verification = Verification{verified, verified ? 1e-7 : INFINITY, 1e-5, 1028, verified ? "" : "C[0][0] nan"};
    rs.details = {{"example_phase_s", 1e-3}};
    rs.warmup = WarmupOutcome{0.31, 6, true};
    rs.affected = {false, false, false};
    s.ranks.push_back(rs);
  }
  return s;
}

TEST(ResultsSchema, DocumentWrittenByTheReporterIsValid) {
  const Placement p = two_ranks_one_gpu();
  const MeasureSettings settings = three_repetitions();
  const Result one = summarize(sample_measurement(1, true), p, SharingMode::automatic, settings, std::nullopt);
  const Result two =
      summarize(sample_measurement(2, false), p, SharingMode::automatic, settings, one.primary_summary().median);
  const auto doc = results_document(to_json(sample_context(p)), {to_json(one), to_json(two)}, true);
  EXPECT_EQ(results_schema_errors(nlohmann::json::parse(doc.dump())), "");
  EXPECT_EQ(doc["results"][1]["mode"], "mixed");  // one MPS client, one not
  EXPECT_TRUE(doc["results"][1]["max_rel_error"].is_null());
  EXPECT_FALSE(doc["results"][1]["verified"].get<bool>());
}

TEST(ResultsSchema, CpuRunAndEmptyRunAreValid) {
  const Placement p = build_placement(DeviceKind::cpu, {describe_rank(0, "h", 0, DeviceKind::cpu, GpuInfo{})});
  Context c = sample_context(p);
  c.world_size = 1;
  c.device_note = "auto: no usable GPU";
  const auto empty = results_document(to_json(c), {}, false);
  EXPECT_EQ(results_schema_errors(nlohmann::json::parse(empty.dump())), "");
  ConfigSamples s = sample_measurement(1, true);
  s.ranks[0].gpu_s.clear();
  const Result r = summarize(s, p, SharingMode::automatic, three_repetitions(), std::nullopt);
  const auto doc = results_document(to_json(c), {to_json(r)}, true);
  EXPECT_EQ(results_schema_errors(nlohmann::json::parse(doc.dump())), "");
  EXPECT_EQ(doc["results"][0]["mode"], "cpu");
}

TEST(ResultsSchema, SchemaRejectsBrokenDocuments) {
  const Placement p = two_ranks_one_gpu();
  const Result one =
      summarize(sample_measurement(1, true), p, SharingMode::automatic, three_repetitions(), std::nullopt);
  auto doc = nlohmann::json::parse(results_document(to_json(sample_context(p)), {to_json(one)}, true).dump());
  auto missing = doc;
  missing["results"][0].erase("verified");
  EXPECT_NE(results_schema_errors(missing), "");
  auto wrong_type = doc;
  wrong_type["results"][0]["size"] = "512";
  EXPECT_NE(results_schema_errors(wrong_type), "");
  auto wrong_version = doc;
  wrong_version["schema_version"] = 99;
  EXPECT_NE(results_schema_errors(wrong_version), "");
}

// An out-of-memory configuration: recorded as failed with its reason, every
// measured field null or empty; an ok record may not look like that.
TEST(ResultsSchema, FailedConfigurationIsValidAndOkOneMustBeMeasured) {
  const Placement p = two_ranks_one_gpu();
  ConfigSamples s = sample_measurement(2, true);
  for (auto& r : s.ranks) {
    RankSamples empty;
    empty.rank = r.rank;
    r = empty;
  }
  s.ranks[1].error = "rank 1 on host gpu01: cudaMalloc failed: out of memory [cudaErrorMemoryAllocation]";
  s.error = s.ranks[1].error;
  const Result failed = summarize(s, p, SharingMode::automatic, three_repetitions(), std::nullopt);
  ASSERT_TRUE(failed.failed());
  Context c = sample_context(p);
  c.plan = {s.config};
  const auto doc = nlohmann::json::parse(results_document(to_json(c), {to_json(failed)}, false).dump());
  EXPECT_EQ(results_schema_errors(doc), "");
  const auto& r = doc["results"][0];
  EXPECT_EQ(r["status"], "failed");
  EXPECT_EQ(r["error"], s.error);
  EXPECT_TRUE(r["aggregate"].is_null());
  EXPECT_TRUE(r["ranks"].empty());
  EXPECT_EQ(r["mode"], "mixed");
  auto no_reason = doc;
  no_reason["results"][0]["error"] = nullptr;
  EXPECT_NE(results_schema_errors(no_reason), "");
  auto ok_but_empty = doc;
  ok_but_empty["results"][0]["status"] = "ok";
  ok_but_empty["results"][0]["error"] = nullptr;
  EXPECT_NE(results_schema_errors(ok_but_empty), "");
}

TEST(ResultsSchema, SummaryStatisticsFollowTheProtocol) {
  const Placement p = two_ranks_one_gpu();
  const Result r = summarize(sample_measurement(2, true), p, SharingMode::automatic, three_repetitions(), 1.0);
  // window = max(end) - min(start): 0.5, 0.41, 0.6
  ASSERT_EQ(r.window_s.size(), 3u);
  EXPECT_NEAR(r.window_s[0], 0.5, 1e-12);
  EXPECT_NEAR(r.window_s[1], 0.41, 1e-12);
  EXPECT_NEAR(r.window_s[2], 0.6, 1e-12);
  const double work = 2.0 * 100 * 2.0 * 512 * 512 * 512;  // ranks x iterations x flops
  EXPECT_NEAR(r.flop_per_s.median, work / 0.5, 1e-3 * work);
  EXPECT_NEAR(r.flop_per_s.max, work / 0.41, 1e-3 * work);
  EXPECT_NEAR(*r.speedup, r.flop_per_s.median, 1e-6 * r.flop_per_s.median);
  EXPECT_NEAR(r.ranks[0].iteration_time_s.median, 0.5 / 100, 1e-12);
  ASSERT_TRUE(r.ranks[0].gpu_iteration_time_s.has_value());
  EXPECT_NEAR(r.ranks[0].gpu_iteration_time_s->median, 0.49 / 100, 1e-12);
  EXPECT_GT(r.jain_fairness, 0.99);
  EXPECT_LE(r.jain_fairness, 1.0);
}

// Adaptive repetitions and GPU clocks: what the sampler of each GPU recorded
// travels through serialize/deserialize and is written per kept repetition.
ConfigSamples throttled_measurement() {
  ConfigSamples s = sample_measurement(2, true);
  GpuClockRecord clocks;
  clocks.gpu_index = 0;
  clocks.gpu_uuid = "GPU-18f96ea3-1bcf-7253-29db-c89d0ab4e1e8";
  clocks.host = "gpu01";
  clocks.sampled = true;
  clocks.reference_mhz = 1980;
  for (int rep = 0; rep < 3; ++rep) {
    ClockWindow w;
    w.samples = 80 + rep;
    w.mean_mhz = rep == 1 ? 1700.0 : 1980.0;
    w.min_mhz = rep == 1 ? 1605.0 : 1980.0;
    w.max_mhz = 1980;
    w.events = rep == 1 ? (clock_event::kSwPowerCap | clock_event::kGpuIdle) : 0;
    clocks.windows.push_back(w);
  }
  s.ranks[0].clocks = clocks;
  for (auto& r : s.ranks) {
    r.affected = {false, true, false};
    r.discarded = 2;
    r = deserialize_samples(serialize(r));  // as rank 0 receives them
  }
  return s;
}

TEST(ResultsSchema, NoiseWarmupAndClocksAreWrittenAndValid) {
  const Placement p = two_ranks_one_gpu();
  MeasureSettings adaptive = three_repetitions();
  adaptive.max_noise = 0.01;
  adaptive.max_time_s = 3;
  adaptive.discard_throttled = true;
  const Result r = summarize(throttled_measurement(), p, SharingMode::automatic, adaptive, std::nullopt);
  Context c = sample_context(p);
  c.settings = adaptive;
  const auto doc = nlohmann::json::parse(results_document(to_json(c), {to_json(r)}, true).dump());
  EXPECT_EQ(results_schema_errors(doc), "");
  const auto& settings = doc["context"]["settings"];
  EXPECT_EQ(settings["max_noise"], 0.01);
  EXPECT_EQ(settings["max_time_s"], 3.0);
  EXPECT_EQ(settings["warmup_time_s"], 0.2);
  EXPECT_EQ(settings["discard_throttled"], true);
  EXPECT_EQ(settings["throttle_retries"], 3);
  EXPECT_EQ(settings["clock_threshold"], 0.9);
  const auto& j = doc["results"][0];
  EXPECT_EQ(j["repetitions"], 3);
  EXPECT_EQ(j["noise"]["estimator"], "median_se_normal");
  EXPECT_EQ(j["noise"]["target"], 0.01);
  const double relative = j["noise"]["relative"].get<double>();
  EXPECT_GT(relative, 0.01);  // windows 0.5, 0.41, 0.6: far noisier than 1 %
  EXPECT_EQ(j["noise"]["met"], false);
  EXPECT_EQ(j["warmup"], nlohmann::json({{"seconds", 0.31}, {"windows", 6}, {"stable", true}}));
  const auto& clocks = j["clocks"];
  EXPECT_EQ(clocks["source"], "nvml");
  EXPECT_EQ(clocks["note"], "");
  EXPECT_EQ(clocks["reference_sm_clock_mhz"], 1980.0);
  EXPECT_EQ(clocks["affected_repetitions"], 1);
  EXPECT_EQ(clocks["discarded_repetitions"], 2);
  EXPECT_EQ(clocks["repetition_affected"], nlohmann::json({false, true, false}));
  ASSERT_EQ(clocks["gpus"].size(), 1u);  // rank 1 shares GPU 0 and does not sample it
  const auto& gpu = clocks["gpus"][0];
  EXPECT_EQ(gpu["gpu_uuid"], "GPU-18f96ea3-1bcf-7253-29db-c89d0ab4e1e8");
  EXPECT_EQ(gpu["sm_clock_mhz"], nlohmann::json({1980.0, 1700.0, 1980.0}));
  EXPECT_EQ(gpu["min_sm_clock_mhz"], nlohmann::json({1980.0, 1605.0, 1980.0}));
  EXPECT_EQ(gpu["samples"], nlohmann::json({80, 81, 82}));
  EXPECT_EQ(gpu["events"], nlohmann::json::parse(R"([[], ["gpu_idle", "sw_power_cap"], []])"));
}

TEST(ResultsSchema, FixedRepetitionsStillReportNoiseAndTheCpuHasNoClocks) {
  const Placement p = build_placement(DeviceKind::cpu, {describe_rank(0, "h", 0, DeviceKind::cpu, GpuInfo{})});
  ConfigSamples s = sample_measurement(1, true);
  s.ranks[0].gpu_s.clear();
  const Result r = summarize(s, p, SharingMode::automatic, three_repetitions(), std::nullopt);
  Context c = sample_context(p);
  c.world_size = 1;
  const auto doc = nlohmann::json::parse(results_document(to_json(c), {to_json(r)}, true).dump());
  EXPECT_EQ(results_schema_errors(doc), "");
  const auto& j = doc["results"][0];
  EXPECT_TRUE(j["noise"]["relative"].is_number());
  EXPECT_TRUE(j["noise"]["target"].is_null());
  EXPECT_TRUE(j["noise"]["met"].is_null());
  EXPECT_TRUE(doc["context"]["settings"]["max_noise"].is_null());
  EXPECT_TRUE(doc["context"]["settings"]["max_time_s"].is_null());
  EXPECT_EQ(j["clocks"]["source"], "none");
  EXPECT_EQ(j["clocks"]["note"], "the CPU device has no GPU clocks");
  EXPECT_TRUE(j["clocks"]["gpus"].empty());
  EXPECT_EQ(j["clocks"]["repetition_affected"], nlohmann::json({false, false, false}));
}

TEST(ResultsSchema, GpuWithoutNvmlSaysWhy) {
  const Placement p = two_ranks_one_gpu();
  ConfigSamples s = sample_measurement(1, true);
  GpuClockRecord none;
  none.gpu_index = 0;
  none.gpu_uuid = "GPU-18f96ea3-1bcf-7253-29db-c89d0ab4e1e8";
  none.host = "gpu01";
  none.note = "NVML not loaded: libnvidia-ml.so.1: cannot open shared object file";
  s.ranks[0].clocks = none;
  const Result r = summarize(s, p, SharingMode::automatic, three_repetitions(), std::nullopt);
  const auto doc = nlohmann::json::parse(results_document(to_json(sample_context(p)), {to_json(r)}, true).dump());
  EXPECT_EQ(results_schema_errors(doc), "");
  EXPECT_EQ(doc["results"][0]["clocks"]["source"], "none");
  EXPECT_EQ(doc["results"][0]["clocks"]["note"], none.note);
  EXPECT_TRUE(doc["results"][0]["clocks"]["reference_sm_clock_mhz"].is_null());
}

TEST(ResultsSchema, NewFieldsAreOptionalButTyped) {
  const Placement p = two_ranks_one_gpu();
  const Result r = summarize(throttled_measurement(), p, SharingMode::automatic, three_repetitions(), std::nullopt);
  const auto doc = nlohmann::json::parse(results_document(to_json(sample_context(p)), {to_json(r)}, true).dump());
  ASSERT_EQ(results_schema_errors(doc), "");
  auto older = doc;  // a file written before these fields existed
  for (const char* key : {"noise", "warmup", "clocks"}) older["results"][0].erase(key);
  for (const char* key : {"max_noise", "max_time_s", "warmup_time_s", "discard_throttled", "throttle_retries",
                          "clock_threshold"}) {
    older["context"]["settings"].erase(key);
  }
  EXPECT_EQ(results_schema_errors(older), "");
  const std::vector<std::pair<std::string, nlohmann::json>> broken = {
      {"/results/0/clocks/source", "dcgm"},
      {"/results/0/clocks/gpus/0/events/1/0", "power"},
      {"/results/0/clocks/repetition_affected/0", 1},
      {"/results/0/clocks/affected_repetitions", -1},
      {"/results/0/noise/relative", "1%"},
      {"/results/0/noise/target", 1.5},
      {"/results/0/noise/met", "no"},
      {"/results/0/warmup/windows", 0},
      {"/results/0/warmup", nullptr},  // an ok record was warmed up
      {"/results/0/clocks", nullptr},
      {"/context/settings/max_noise", 0},
      {"/context/settings/clock_threshold", 1.5},
      {"/context/settings/throttle_retries", -1},
  };
  for (const auto& [pointer, value] : broken) {
    auto bad = doc;
    bad[nlohmann::json::json_pointer(pointer)] = value;
    EXPECT_NE(results_schema_errors(bad), "") << pointer;
  }
  auto extra = doc;
  extra["results"][0]["noise"]["confidence"] = 0.95;
  EXPECT_NE(results_schema_errors(extra), "") << "the new objects are closed, like summary and verification";
  auto missing = doc;
  missing["results"][0]["noise"].erase("met");
  EXPECT_NE(results_schema_errors(missing), "");
}

TEST(ResultsSchema, FailedRecordKeepsNoiseAndNullsTheRest) {
  const Placement p = two_ranks_one_gpu();
  ConfigSamples s = sample_measurement(2, true);
  for (auto& r : s.ranks) {
    RankSamples empty;
    empty.rank = r.rank;
    r = empty;
  }
  s.error = "rank 1 on host gpu01: cudaMalloc failed: out of memory";
  MeasureSettings adaptive = three_repetitions();
  adaptive.max_noise = 0.02;
  const Result failed = summarize(s, p, SharingMode::automatic, adaptive, std::nullopt);
  const auto doc = nlohmann::json::parse(results_document(to_json(sample_context(p)), {to_json(failed)}, false).dump());
  EXPECT_EQ(results_schema_errors(doc), "");
  const auto& j = doc["results"][0];
  EXPECT_EQ(j["noise"], nlohmann::json::parse(
                            R"({"estimator": "median_se_normal", "relative": null, "target": 0.02, "met": null})"));
  EXPECT_TRUE(j["warmup"].is_null());
  EXPECT_TRUE(j["clocks"].is_null());
  EXPECT_EQ(j["repetitions"], 3);
}

}  // namespace
}  // namespace mpsb
