// The JSON the reporters write, checked against schema/mpsbench-results.schema.json.
#include <gtest/gtest.h>

#include <fstream>

#include <valijson/adapters/nlohmann_json_adapter.hpp>
#include <valijson/schema.hpp>
#include <valijson/schema_parser.hpp>
#include <valijson/validator.hpp>

#include "result.hpp"
#include "result_json.hpp"

namespace mpsb {
namespace {

nlohmann::json load_schema() {
  std::ifstream in(MPSBENCH_SCHEMA_PATH);
  return nlohmann::json::parse(in);
}

std::string validation_errors(const nlohmann::json& document) {
  static const nlohmann::json schema_json = load_schema();
  valijson::Schema schema;
  valijson::SchemaParser parser;
  valijson::adapters::NlohmannJsonAdapter schema_adapter(schema_json);
  parser.populateSchema(schema_adapter, schema);
  valijson::Validator validator;
  valijson::ValidationResults results;
  valijson::adapters::NlohmannJsonAdapter doc_adapter(document);
  if (validator.validate(schema, doc_adapter, &results)) return "";
  std::string text;
  valijson::ValidationResults::Error error;
  while (results.popError(error)) {
    std::string path;
    for (const auto& p : error.context) path += p;
    text += path + ": " + error.description + "\n";
  }
  return text.empty() ? "invalid" : text;
}

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

ConfigSamples sample_measurement(int ranks_per_gpu, bool verified) {
  ConfigSamples s;
  s.config = Config{"matmul", "fp32", 512, ranks_per_gpu};
  s.iterations = 100;
  for (int r = 0; r < ranks_per_gpu; ++r) {
    RankSamples rs;
    rs.rank = r;
    rs.start_s = {10.0, 11.0, 12.0};
    rs.end_s = {10.5, 11.4 + 0.01 * r, 12.6};
    rs.gpu_s = {0.49, 0.39, 0.59};
    rs.work = Work{2.0 * 512 * 512 * 512, 3.0 * 512 * 512 * 4, 0, ""};
    rs.verification = Verification{verified, verified ? 1e-7 : INFINITY, 1e-5, 1028, verified ? "" : "C[0][0] nan"};
    rs.details = {{"example_phase_s", 1e-3}};
    s.ranks.push_back(rs);
  }
  return s;
}

TEST(ResultsSchema, DocumentWrittenByTheReporterIsValid) {
  const Placement p = two_ranks_one_gpu();
  const Result one = summarize(sample_measurement(1, true), p, SharingMode::automatic, 3, std::nullopt);
  const Result two = summarize(sample_measurement(2, false), p, SharingMode::automatic, 3, one.primary_summary().median);
  const auto doc = results_document(to_json(sample_context(p)), {to_json(one), to_json(two)}, true);
  EXPECT_EQ(validation_errors(nlohmann::json::parse(doc.dump())), "");
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
  EXPECT_EQ(validation_errors(nlohmann::json::parse(empty.dump())), "");
  ConfigSamples s = sample_measurement(1, true);
  s.ranks[0].gpu_s.clear();
  const Result r = summarize(s, p, SharingMode::automatic, 3, std::nullopt);
  const auto doc = results_document(to_json(c), {to_json(r)}, true);
  EXPECT_EQ(validation_errors(nlohmann::json::parse(doc.dump())), "");
  EXPECT_EQ(doc["results"][0]["mode"], "cpu");
}

TEST(ResultsSchema, SchemaRejectsBrokenDocuments) {
  const Placement p = two_ranks_one_gpu();
  const Result one = summarize(sample_measurement(1, true), p, SharingMode::automatic, 3, std::nullopt);
  auto doc = nlohmann::json::parse(results_document(to_json(sample_context(p)), {to_json(one)}, true).dump());
  auto missing = doc;
  missing["results"][0].erase("verified");
  EXPECT_NE(validation_errors(missing), "");
  auto wrong_type = doc;
  wrong_type["results"][0]["size"] = "512";
  EXPECT_NE(validation_errors(wrong_type), "");
  auto wrong_version = doc;
  wrong_version["schema_version"] = 99;
  EXPECT_NE(validation_errors(wrong_version), "");
}

// An out-of-memory configuration: recorded as failed with its reason, every
// measured field null or empty; an ok record may not look like that.
TEST(ResultsSchema, FailedConfigurationIsValidAndOkOneMustBeMeasured) {
  const Placement p = two_ranks_one_gpu();
  ConfigSamples s = sample_measurement(2, true);
  for (auto& r : s.ranks) r = RankSamples{r.rank, 0, {}, {}, {}, {}, {}, {}, ""};
  s.ranks[1].error = "rank 1 on host gpu01: cudaMalloc failed: out of memory [cudaErrorMemoryAllocation]";
  s.error = s.ranks[1].error;
  const Result failed = summarize(s, p, SharingMode::automatic, 3, std::nullopt);
  ASSERT_TRUE(failed.failed());
  Context c = sample_context(p);
  c.plan = {s.config};
  const auto doc = nlohmann::json::parse(results_document(to_json(c), {to_json(failed)}, false).dump());
  EXPECT_EQ(validation_errors(doc), "");
  const auto& r = doc["results"][0];
  EXPECT_EQ(r["status"], "failed");
  EXPECT_EQ(r["error"], s.error);
  EXPECT_TRUE(r["aggregate"].is_null());
  EXPECT_TRUE(r["ranks"].empty());
  EXPECT_EQ(r["mode"], "mixed");
  auto no_reason = doc;
  no_reason["results"][0]["error"] = nullptr;
  EXPECT_NE(validation_errors(no_reason), "");
  auto ok_but_empty = doc;
  ok_but_empty["results"][0]["status"] = "ok";
  ok_but_empty["results"][0]["error"] = nullptr;
  EXPECT_NE(validation_errors(ok_but_empty), "");
}

TEST(ResultsSchema, SummaryStatisticsFollowTheProtocol) {
  const Placement p = two_ranks_one_gpu();
  const Result r = summarize(sample_measurement(2, true), p, SharingMode::automatic, 3, 1.0);
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

}  // namespace
}  // namespace mpsb
