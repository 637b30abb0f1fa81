// summarize() (harness/results/result.cpp) on synthetic ConfigSamples: latency
// percentiles per rank and overall, bytes kernels, the --allreduce collective
// record (and a wrong reduction failing verification), and their JSON
// (harness/results/result_json.cpp). Mixes: test_summarize_mix.cpp.
#include <gtest/gtest.h>

#include <cmath>
#include <memory>

#include "measure/host_allreduce.hpp"
#include "registry.hpp"
#include "results/result.hpp"
#include "results/result_json.hpp"
#include "summarize_support.hpp"

namespace mpsb {
namespace {

using namespace summarize_test;  // NOLINT: the shared builders of synthetic samples

// A request kernel (per_iteration_latency, items "request") registered in this
// test binary only, so these tests do not wait for kernels/inference. Never made.
KernelInfo request_kernel_info() {
  KernelInfo info;
  info.name = "requesttest";
  info.summary = "test-only request kernel";
  info.suite_order = 1000;
  info.precisions = {"fp16"};
  info.default_precisions = {"fp16"};
  info.default_gpu_sizes = {8};
  info.default_cpu_sizes = {4};
  info.max_size = 4096;
  info.primary = PrimaryMetric::items;
  info.params = {KernelParam{"hidden", 64, 16, 16384, "width"}};
  info.per_iteration_latency = true;
  info.device_bytes = [](const std::string&, std::int64_t, const KernelParams&) { return 0.0; };
  info.make = [](const WorkloadArgs&) -> std::unique_ptr<Workload> { return nullptr; };
  return info;
}
MPSB_REGISTER_KERNEL(request_kernel_info);


// ---------------------------------------------------------------- latency

// Two ranks of a request kernel: rank 0 saw {1, 2, 3, 4} ms, rank 1 {10, 20} ms.
ConfigSamples request_samples() {
  ConfigSamples s;
  s.config = plain("requesttest", "fp16", 4, 2, {{"hidden", 64}});
  s.iterations = 2;
  s.ranks.push_back(instance(0, s.config, 2, {0, 1, 2}, {0.5, 1.5, 2.5}, requests(100)));
  s.ranks.push_back(instance(1, s.config, 2, {0, 1, 2}, {0.5, 1.5, 2.5}, requests(100)));
  s.ranks[0].latency_s = {0.004, 0.001, 0.003, 0.002};
  s.ranks[1].latency_s = {0.020, 0.010};
  return s;
}

TEST(SummarizeLatency, PercentilesPerRankAndOverall) {
  const Result r = summarize(request_samples(), cpu_ranks(2), SharingMode::automatic, three_repetitions(), 1.0);
  ASSERT_FALSE(r.failed());
  ASSERT_EQ(r.ranks.size(), 2u);
  ASSERT_TRUE(r.ranks[0].latency_s.has_value());
  const auto& a = *r.ranks[0].latency_s;
  EXPECT_EQ(a.count, 4);
  EXPECT_REL(a.mean, 0.0025);
  EXPECT_REL(a.p50, 0.0025);   // numpy.percentile([1, 2, 3, 4], 50) ms
  EXPECT_REL(a.p95, 0.00385);  // position 2.85
  EXPECT_REL(a.p99, 0.00397);  // position 2.97
  EXPECT_REL(a.max, 0.004);
  ASSERT_TRUE(r.ranks[1].latency_s.has_value());
  const auto& b = *r.ranks[1].latency_s;
  EXPECT_EQ(b.count, 2);
  EXPECT_REL(b.mean, 0.015);
  EXPECT_REL(b.p50, 0.015);
  EXPECT_REL(b.p95, 0.0195);
  EXPECT_REL(b.p99, 0.0199);
  EXPECT_REL(b.max, 0.020);
  // Overall: every request of every instance, {1, 2, 3, 4, 10, 20} ms, not a mean of the ranks' figures.
  ASSERT_TRUE(r.latency.has_value());
  EXPECT_EQ(r.latency->count, 6);
  EXPECT_REL(r.latency->mean, 0.040 / 6);
  EXPECT_REL(r.latency->p50, 0.0035);  // position 2.5
  EXPECT_REL(r.latency->p95, 0.0175);  // position 4.75
  EXPECT_REL(r.latency->p99, 0.0195);  // position 4.95
  EXPECT_REL(r.latency->max, 0.020);
  // Requests are items: 2 ranks x 2 iterations x 1 request per 0.5 s window.
  EXPECT_EQ(r.primary, PrimaryMetric::items);
  EXPECT_EQ(r.primary_unit(), "request/s");
  EXPECT_REL(r.item_per_s.median, 8.0);
  EXPECT_FALSE(r.collective.has_value());
  EXPECT_TRUE(r.tenants.empty());
}

TEST(SummarizeLatency, JsonCarriesTheLatencyRecord) {
  const nlohmann::json j =
      json_of(summarize(request_samples(), cpu_ranks(2), SharingMode::automatic, three_repetitions(), 1.0));
  EXPECT_EQ(j["kind"], "kernel");
  EXPECT_EQ(j["status"], "ok");
  EXPECT_EQ(j["params"], (nlohmann::json{{"hidden", 64}}));
  EXPECT_EQ(j["primary_metric"], "item_per_s");
  EXPECT_EQ(j["primary_unit"], "request/s");
  const auto& l = j["latency"];
  EXPECT_EQ(l["source"], "host_steady_clock");
  EXPECT_EQ(l["unit"], "s");
  EXPECT_EQ(l["request"], "one iteration");
  EXPECT_EQ(l["overall"]["count"], 6);
  EXPECT_NEAR(l["overall"]["p50"].get<double>(), 0.0035, 1e-15);
  EXPECT_NEAR(l["overall"]["p95"].get<double>(), 0.0175, 1e-15);
  EXPECT_NEAR(l["overall"]["p99"].get<double>(), 0.0195, 1e-15);
  EXPECT_NEAR(l["overall"]["max"].get<double>(), 0.020, 1e-15);
  EXPECT_NEAR(l["overall"]["mean"].get<double>(), 0.040 / 6, 1e-15);
  for (const char* key : {"count", "mean", "p50", "p95", "p99", "max"}) {
    EXPECT_TRUE(l["overall"].contains(key)) << key;
  }
  EXPECT_EQ(l["overall"].size(), 6u);
  EXPECT_EQ(j["ranks"][0]["latency_s"]["count"], 4);
  EXPECT_NEAR(j["ranks"][0]["latency_s"]["p95"].get<double>(), 0.00385, 1e-15);
  EXPECT_EQ(j["ranks"][1]["latency_s"]["count"], 2);
  EXPECT_TRUE(j["collective"].is_null());
  EXPECT_TRUE(j["tenants"].is_null());
  EXPECT_TRUE(j["ranks"][0]["collective_time_s"].is_null());
  EXPECT_TRUE(j["ranks"][0]["tenant"].is_null());
}

TEST(SummarizeLatency, KernelsWithoutRequestsHaveNone) {
  ConfigSamples s;
  s.config = plain("matmul", "fp32", 64, 1);
  s.iterations = 10;
  s.ranks.push_back(instance(0, s.config, 10, {0, 1, 2}, {0.5, 1.5, 2.5}, flops(1e6)));
  const Result r = summarize(s, cpu_ranks(1), SharingMode::automatic, three_repetitions(), std::nullopt);
  EXPECT_FALSE(r.latency.has_value());
  EXPECT_FALSE(r.ranks[0].latency_s.has_value());
  const nlohmann::json j = json_of(r);
  EXPECT_TRUE(j["latency"].is_null());
  EXPECT_TRUE(j["ranks"][0]["latency_s"].is_null());
  EXPECT_EQ(j["params"], nlohmann::json::object());
  EXPECT_EQ(j["primary_metric"], "flop_per_s");
}

// PrimaryMetric::bytes (kernel stream): the aggregate is byte_per_s, "B/s".
TEST(SummarizeBytes, ByteKernelsReportBytesPerSecond) {
  const KernelInfo* stream = find_kernel("stream");
  if (stream == nullptr) GTEST_SKIP() << "kernel stream not registered yet";
  ConfigSamples s;
  s.config = plain("stream", stream->default_precisions.front(), 1024, 1);
  s.iterations = 10;
  s.ranks.push_back(instance(0, s.config, 10, {0, 1, 2}, {0.5, 1.5, 2.5}, Work{2048, 24576, 0, ""}));
  const Result r = summarize(s, cpu_ranks(1), SharingMode::automatic, three_repetitions(), std::nullopt);
  EXPECT_EQ(r.primary, PrimaryMetric::bytes);
  EXPECT_EQ(r.primary_unit(), "B/s");
  EXPECT_REL(r.primary_summary().median, 24576 * 10 / 0.5);
  EXPECT_REL(r.ranks[0].throughput, 24576 * 10 / 0.5);
  const nlohmann::json j = json_of(r);
  EXPECT_EQ(j["primary_metric"], "byte_per_s");
  EXPECT_EQ(j["primary_unit"], "B/s");
}

TEST(SummarizeBytes, MetricNamesAndUnits) {
  EXPECT_STREQ(primary_metric_name(PrimaryMetric::flops), "flop_per_s");
  EXPECT_STREQ(primary_metric_name(PrimaryMetric::items), "item_per_s");
  EXPECT_STREQ(primary_metric_name(PrimaryMetric::bytes), "byte_per_s");
  EXPECT_EQ(primary_unit_of(PrimaryMetric::bytes, Work{1, 2, 3, "request"}), "B/s");
  EXPECT_EQ(primary_unit_of(PrimaryMetric::flops, Work{1, 2, 3, "request"}), "FLOP/s");
  EXPECT_EQ(primary_unit_of(PrimaryMetric::items, Work{1, 2, 3, "request"}), "request/s");
  EXPECT_EQ(primary_unit_of(PrimaryMetric::items, Work{1, 2, 3, ""}), "item/s");
}

// ---------------------------------------------------------------- --allreduce

// allreduce_samples() (summarize_support.hpp): two matmul ranks, 10 iterations per repetition, with the
// collective's seconds per repetition: rank 0 {0.01, 0.02, 0.03}, rank 1 {0.04, 0.05, 0.06}.
MeasureSettings with_allreduce(std::int64_t bytes) {
  MeasureSettings s = three_repetitions();
  s.allreduce_bytes = bytes;
  return s;
}

TEST(SummarizeCollective, RecordsTheCollectivePerIterationAndPerRank) {
  const Result r = summarize(allreduce_samples(), cpu_ranks(2), SharingMode::automatic, with_allreduce(65536), 1.0);
  ASSERT_TRUE(r.collective.has_value());
  const CollectiveRecord& c = *r.collective;
  EXPECT_EQ(c.bytes, 65536);
  // Per rank: seconds per repetition / 10 iterations.
  ASSERT_TRUE(r.ranks[0].collective_time_s.has_value());
  EXPECT_REL(r.ranks[0].collective_time_s->median, 0.002);
  EXPECT_REL(r.ranks[0].collective_time_s->min, 0.001);
  EXPECT_REL(r.ranks[0].collective_time_s->max, 0.003);
  ASSERT_EQ(r.ranks[0].collective_time_s->samples.size(), 3u);
  EXPECT_REL(r.ranks[1].collective_time_s->median, 0.005);
  // The record: one sample per rank, its median.
  ASSERT_EQ(c.time_per_iteration_s.samples.size(), 2u);
  EXPECT_REL(c.time_per_iteration_s.samples[0], 0.002);
  EXPECT_REL(c.time_per_iteration_s.samples[1], 0.005);
  EXPECT_REL(c.time_per_iteration_s.median, 0.0035);
  EXPECT_REL(c.time_per_iteration_s.min, 0.002);
  EXPECT_REL(c.time_per_iteration_s.max, 0.005);
  // Iterations: elapsed {0.5, 0.4, 0.6} / 10, median 0.05 on both ranks.
  EXPECT_REL(r.ranks[0].iteration_time_s.median, 0.05);
  EXPECT_REL(c.fraction_of_iteration, 0.0035 / 0.05);
  EXPECT_EQ(c.checked_values, 2 * 8192 * 40);
  EXPECT_TRUE(c.ok);
  EXPECT_EQ(c.detail, "");
  EXPECT_TRUE(r.verified);
}

TEST(SummarizeCollective, JsonHasEveryField) {
  const nlohmann::json j =
      json_of(summarize(allreduce_samples(), cpu_ranks(2), SharingMode::automatic, with_allreduce(65536), 1.0));
  const auto& c = j["collective"];
  EXPECT_EQ(c["operation"], "MPI_Allreduce");
  EXPECT_EQ(c["op"], "MPI_SUM");
  EXPECT_EQ(c["datatype"], "MPI_DOUBLE");
  EXPECT_EQ(c["bytes"], 65536);
  EXPECT_EQ(c["communicator"], "active ranks");
  EXPECT_NEAR(c["time_per_iteration_s"]["median"].get<double>(), 0.0035, 1e-15);
  EXPECT_EQ(c["time_per_iteration_s"]["samples"].size(), 2u);
  EXPECT_NEAR(c["fraction_of_iteration"].get<double>(), 0.07, 1e-12);
  EXPECT_EQ(c["checked_values"], 2 * 8192 * 40);
  EXPECT_EQ(c["ok"], true);
  EXPECT_EQ(c["detail"], "");
  EXPECT_EQ(c.size(), 10u);
  EXPECT_NEAR(j["ranks"][1]["collective_time_s"]["median"].get<double>(), 0.005, 1e-15);
  EXPECT_EQ(j["ranks"][1]["collective_time_s"]["samples"].size(), 3u);
  EXPECT_EQ(j["verified"], true);
}

TEST(SummarizeCollective, AWrongReductionFailsVerification) {
  ConfigSamples s = allreduce_samples();
  s.ranks[1].collective_wrong = 5;
  s.ranks[1].collective_problem = "MPI_Allreduce element 3 is nan, expected 6.000000 over 2 ranks";
  const Result r = summarize(s, cpu_ranks(2), SharingMode::automatic, with_allreduce(65536), 1.0);
  ASSERT_TRUE(r.collective.has_value());
  EXPECT_FALSE(r.collective->ok);
  EXPECT_NE(r.collective->detail.find("rank 1: 5 of 327680 reduced values wrong"), std::string::npos)
      << r.collective->detail;
  EXPECT_NE(r.collective->detail.find("MPI_Allreduce element 3 is nan"), std::string::npos) << r.collective->detail;
  // Every kernel output was right; the step still is not.
  EXPECT_TRUE(r.ranks[0].verification.ok);
  EXPECT_TRUE(r.ranks[1].verification.ok);
  EXPECT_FALSE(r.verified);
  const nlohmann::json j = json_of(r);
  EXPECT_EQ(j["collective"]["ok"], false);
  EXPECT_EQ(j["verified"], false);
}

TEST(SummarizeCollective, TheFirstWrongRankIsNamed) {
  ConfigSamples s = allreduce_samples();
  s.ranks[0].collective_wrong = 1;
  s.ranks[0].collective_problem = "first";
  s.ranks[1].collective_wrong = 2;
  s.ranks[1].collective_problem = "second";
  const Result r = summarize(s, cpu_ranks(2), SharingMode::automatic, with_allreduce(65536), 1.0);
  EXPECT_FALSE(r.collective->ok);
  EXPECT_NE(r.collective->detail.find("rank 0: 1 of"), std::string::npos) << r.collective->detail;
  EXPECT_NE(r.collective->detail.find("first"), std::string::npos) << r.collective->detail;
}

TEST(SummarizeCollective, NoneWithoutTheOption) {
  const Result r = summarize(allreduce_samples(), cpu_ranks(2), SharingMode::automatic, three_repetitions(), 1.0);
  EXPECT_FALSE(r.collective.has_value());
  // Samples taken, but the run did not ask: the per-rank figure is still the samples'.
  const nlohmann::json j = json_of(r);
  EXPECT_TRUE(j["collective"].is_null());
}

}  // namespace
}  // namespace mpsb
