// summarize() (harness/results/result.cpp) on synthetic ConfigSamples: latency
// percentiles per rank and overall, the --allreduce collective record (and a
// wrong reduction failing verification), and the tenants of a mix with their
// throughput and slowdown against hand-computed values; their JSON
// (harness/results/result_json.cpp); HostAllreduce's expected sums.
#include <gtest/gtest.h>

#include <cmath>
#include <memory>

#include "measure/host_allreduce.hpp"
#include "registry.hpp"
#include "results/result.hpp"
#include "results/result_json.hpp"

namespace mpsb {
namespace {

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

constexpr double kTolerance = 1e-12;  // relative, for values built from a few divisions

#define EXPECT_REL(actual, expected)                                                  \
  EXPECT_NEAR((actual), (expected), kTolerance * std::max(1.0, std::fabs(expected))) \
      << #actual " vs " #expected

Placement cpu_ranks(int n) {
  std::vector<RankPlacement> ranks;
  for (int r = 0; r < n; ++r) ranks.push_back(describe_rank(r, "h", r, DeviceKind::cpu, GpuInfo{}));
  return build_placement(DeviceKind::cpu, ranks);
}

MeasureSettings three_repetitions() {
  MeasureSettings s;
  s.repetitions = 3;
  return s;
}

Config plain(const std::string& kernel, const std::string& precision, std::int64_t size, int ranks,
             KernelParams params = {}) {
  return Config{kernel, precision, size, ranks, std::move(params), {}};
}

// One instance's samples of three repetitions.
RankSamples instance(int rank, const Config& config, std::int64_t iterations, std::vector<double> start,
                     std::vector<double> end, Work work, int tenant = 0) {
  RankSamples s;
  s.rank = rank;
  s.tenant = tenant;
  s.config = config;
  s.iterations = iterations;
  s.start_s = std::move(start);
  s.end_s = std::move(end);
  s.work = std::move(work);
  s.verification = Verification{true, 1e-7, 1e-5, 16, ""};
  s.warmup = WarmupOutcome{0.3, 4, true};
  s.affected = std::vector<bool>(s.start_s.size(), false);
  return s;
}

Work flops(double per_iteration) { return Work{per_iteration, 0, 0, ""}; }
Work requests(double flop) { return Work{flop, 1000, 1, "request"}; }

nlohmann::json json_of(const Result& r) { return nlohmann::json::parse(to_json(r).dump()); }

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

// Two matmul ranks, 10 iterations per repetition, with the collective's seconds
// per repetition: rank 0 {0.01, 0.02, 0.03}, rank 1 {0.04, 0.05, 0.06}.
ConfigSamples allreduce_samples() {
  ConfigSamples s;
  s.config = plain("matmul", "fp32", 64, 2);
  s.iterations = 10;
  s.ranks.push_back(instance(0, s.config, 10, {0, 1, 2}, {0.5, 1.4, 2.6}, flops(1e6)));
  s.ranks.push_back(instance(1, s.config, 10, {0, 1, 2}, {0.5, 1.4, 2.6}, flops(1e6)));
  s.ranks[0].collective_s = {0.01, 0.02, 0.03};
  s.ranks[1].collective_s = {0.04, 0.05, 0.06};
  for (auto& r : s.ranks) r.collective_checked = 8192 * 40;  // 64 KiB of doubles, 40 calls
  return s;
}

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

// ---------------------------------------------------------------- mix

Tenant tenant(const std::string& kernel, const std::string& precision, std::int64_t size, int ranks,
              std::map<std::string, std::int64_t> params = {}) {
  return Tenant{kernel, precision, size, ranks, std::move(params)};
}

// "matmul/fp32/64:2,nbody/fp32/256:1": ranks 0 and 1 run matmul (100
// iterations of 1e6 flop), rank 2 nbody (7 iterations of 2e6 flop).
ConfigSamples mix_samples() {
  const std::vector<Tenant> tenants{tenant("matmul", "fp32", 64, 2), tenant("nbody", "fp32", 256, 1)};
  ConfigSamples s;
  s.config = Config{kMixKernel, mix_name(tenants), 0, 3, {}, tenants};
  s.iterations = 100;
  const Config matmul = config_of_slot(s.config, 0), nbody = config_of_slot(s.config, 2);
  s.ranks.push_back(instance(0, matmul, 100, {0, 10, 20}, {1.0, 11.0, 21.0}, flops(1e6), 0));
  s.ranks.push_back(instance(1, matmul, 100, {0.1, 10.1, 20.1}, {1.1, 11.2, 21.1}, flops(1e6), 0));
  s.ranks.push_back(instance(2, nbody, 7, {0.05, 10.0, 20.0}, {0.95, 12.0, 20.5}, flops(2e6), 1));
  return s;
}

TenantBaselines mix_baselines() {
  TenantBaselines b;
  b[std::make_tuple(std::string("matmul"), std::string("fp32"), std::int64_t{64}, 2)] = TenantBaseline{2.0e8, {}};
  b[std::make_tuple(std::string("nbody"), std::string("fp32"), std::int64_t{256}, 1)] =
      TenantBaseline{2 * 1.4e7 / 0.9, {}};
  // Other entries of the run do not matter: the same kernels at other rank counts.
  b[std::make_tuple(std::string("matmul"), std::string("fp32"), std::int64_t{64}, 3)] = TenantBaseline{1.0, {}};
  b[std::make_tuple(std::string("nbody"), std::string("fp32"), std::int64_t{256}, 3)] = TenantBaseline{1.0, {}};
  return b;
}

TEST(SummarizeMix, TenantThroughputAndSlowdownAgainstAlone) {
  const Result r = summarize(mix_samples(), cpu_ranks(3), SharingMode::automatic, three_repetitions(), 123.0,
                             mix_baselines());
  ASSERT_FALSE(r.failed());
  ASSERT_EQ(r.tenants.size(), 2u);
  const TenantResult& m = r.tenants[0];
  EXPECT_EQ(m.spec, tenant("matmul", "fp32", 64, 2));
  EXPECT_EQ(m.primary, PrimaryMetric::flops);
  EXPECT_EQ(m.unit, "FLOP/s");
  // matmul windows (ranks 0, 1): 1.1, 1.2, 1.1 s; work 2 x 100 x 1e6 = 2e8 flop per repetition.
  ASSERT_EQ(m.throughput.samples.size(), 3u);
  EXPECT_REL(m.throughput.samples[0], 2e8 / 1.1);
  EXPECT_REL(m.throughput.samples[1], 2e8 / 1.2);
  EXPECT_REL(m.throughput.samples[2], 2e8 / 1.1);
  EXPECT_REL(m.throughput.median, 2e8 / 1.1);
  EXPECT_REL(m.throughput.min, 2e8 / 1.2);
  ASSERT_TRUE(m.alone_throughput.has_value());
  EXPECT_REL(*m.alone_throughput, 2.0e8);
  ASSERT_TRUE(m.slowdown.has_value());
  EXPECT_REL(*m.slowdown, 1.1);  // 2e8 / (2e8 / 1.1)
  EXPECT_REL(*m.slowdown, *m.alone_throughput / m.throughput.median);
  EXPECT_FALSE(m.latency.has_value());
  EXPECT_FALSE(m.alone_latency_p99_s.has_value());
  EXPECT_FALSE(m.latency_p99_ratio.has_value());

  const TenantResult& n = r.tenants[1];
  EXPECT_EQ(n.spec, tenant("nbody", "fp32", 256, 1));
  // nbody windows (rank 2 alone): 0.9, 2.0, 0.5 s; work 7 x 2e6 = 1.4e7 flop.
  EXPECT_REL(n.throughput.samples[0], 1.4e7 / 0.9);
  EXPECT_REL(n.throughput.samples[1], 1.4e7 / 2.0);
  EXPECT_REL(n.throughput.samples[2], 1.4e7 / 0.5);
  EXPECT_REL(n.throughput.median, 1.4e7 / 0.9);
  EXPECT_REL(*n.alone_throughput, 2 * 1.4e7 / 0.9);
  EXPECT_REL(*n.slowdown, 2.0);
}

TEST(SummarizeMix, TheRecordAddsItsTenantsWork) {
  const Result r = summarize(mix_samples(), cpu_ranks(3), SharingMode::automatic, three_repetitions(), 123.0,
                             mix_baselines());
  EXPECT_EQ(r.config.kernel, "mix");
  EXPECT_EQ(r.config.precision, "matmul/fp32/64:2,nbody/fp32/256:1");
  EXPECT_EQ(r.active_ranks, 3);
  EXPECT_EQ(r.primary, PrimaryMetric::flops);
  // Windows over everyone: 1.1, 2.0, 1.1 s; work 2e8 + 1.4e7 flop per repetition.
  ASSERT_EQ(r.window_s.size(), 3u);
  EXPECT_REL(r.window_s[0], 1.1);
  EXPECT_REL(r.window_s[1], 2.0);
  EXPECT_REL(r.window_s[2], 1.1);
  EXPECT_REL(r.flop_per_s.median, 2.14e8 / 1.1);
  EXPECT_REL(r.flop_per_s.min, 2.14e8 / 2.0);
  // Against the tenants alone, not one rank per device; fairness across different work means nothing.
  EXPECT_FALSE(r.speedup.has_value());
  EXPECT_DOUBLE_EQ(r.jain_fairness, 1.0);
  EXPECT_FALSE(r.latency.has_value());
  // Ranks: their tenant, their own iteration counts.
  ASSERT_EQ(r.ranks.size(), 3u);
  EXPECT_EQ(r.ranks[0].tenant, 0);
  EXPECT_EQ(r.ranks[1].tenant, 0);
  EXPECT_EQ(r.ranks[2].tenant, 1);
  EXPECT_REL(r.ranks[0].throughput, 1e6 * 100 / 1.0);  // elapsed {1, 1, 1}
  EXPECT_REL(r.ranks[2].throughput, 2e6 * 7 / 0.9);    // elapsed {0.9, 2.0, 0.5}
  EXPECT_REL(r.ranks[2].iteration_time_s.median, 0.9 / 7);
  EXPECT_REL(r.ranks[0].iteration_time_s.median, 1.0 / 100);
  EXPECT_TRUE(r.verified);
}

TEST(SummarizeMix, JsonHasTheTenants) {
  const nlohmann::json j = json_of(summarize(mix_samples(), cpu_ranks(3), SharingMode::automatic,
                                             three_repetitions(), 123.0, mix_baselines()));
  EXPECT_EQ(j["kind"], "mix");
  EXPECT_EQ(j["kernel"], "mix");
  EXPECT_EQ(j["size"], 0);
  EXPECT_EQ(j["ranks_per_gpu"], 3);
  EXPECT_EQ(j["params"], nlohmann::json::object());
  ASSERT_TRUE(j["tenants"].is_array());
  ASSERT_EQ(j["tenants"].size(), 2u);
  const auto& t = j["tenants"][1];
  EXPECT_EQ(t["kernel"], "nbody");
  EXPECT_EQ(t["precision"], "fp32");
  EXPECT_EQ(t["size"], 256);
  EXPECT_EQ(t["params"], nlohmann::json::object());
  EXPECT_EQ(t["ranks_per_gpu"], 1);
  EXPECT_EQ(t["primary_metric"], "flop_per_s");
  EXPECT_EQ(t["primary_unit"], "FLOP/s");
  EXPECT_NEAR(t["throughput"]["median"].get<double>(), 1.4e7 / 0.9, 1e-3);
  EXPECT_EQ(t["throughput"]["samples"].size(), 3u);
  EXPECT_TRUE(t["latency"].is_null());
  EXPECT_NEAR(t["alone_throughput"].get<double>(), 2 * 1.4e7 / 0.9, 1e-3);
  EXPECT_NEAR(t["slowdown"].get<double>(), 2.0, 1e-12);
  EXPECT_TRUE(t["alone_latency_p99_s"].is_null());
  EXPECT_TRUE(t["latency_p99_ratio"].is_null());
  EXPECT_EQ(t.size(), 13u);
  EXPECT_EQ(j["ranks"][0]["tenant"], 0);
  EXPECT_EQ(j["ranks"][2]["tenant"], 1);
}

TEST(SummarizeMix, NoBaselineMeansNoSlowdown) {
  const Result r = summarize(mix_samples(), cpu_ranks(3), SharingMode::automatic, three_repetitions(), std::nullopt);
  ASSERT_EQ(r.tenants.size(), 2u);
  for (const auto& t : r.tenants) {
    EXPECT_FALSE(t.alone_throughput.has_value());
    EXPECT_FALSE(t.slowdown.has_value());
  }
  const nlohmann::json j = json_of(r);
  EXPECT_TRUE(j["tenants"][0]["alone_throughput"].is_null());
  EXPECT_TRUE(j["tenants"][0]["slowdown"].is_null());
}

// A request tenant: its own latency record, and the p99 against it alone.
TEST(SummarizeMix, RequestTenantLatencyAgainstAlone) {
  const std::vector<Tenant> tenants{tenant("matmul", "fp32", 64, 1), tenant("requesttest", "fp16", 4, 1, {{"hidden", 64}})};
  ConfigSamples s;
  s.config = Config{kMixKernel, mix_name(tenants), 0, 2, {}, tenants};
  s.iterations = 50;
  s.ranks.push_back(instance(0, config_of_slot(s.config, 0), 50, {0, 1, 2}, {0.5, 1.5, 2.5}, flops(1e6), 0));
  s.ranks.push_back(instance(1, config_of_slot(s.config, 1), 4, {0, 1, 2}, {0.4, 1.4, 2.4}, requests(10), 1));
  s.ranks[1].latency_s = {0.1, 0.1, 0.1, 0.1, 0.1, 0.1, 0.1, 0.1, 0.1, 0.1, 0.1, 0.2};
  TenantBaselines alone;
  alone[std::make_tuple(std::string("requesttest"), std::string("fp16"), std::int64_t{4}, 1)] =
      TenantBaseline{5.0, 0.05};
  const Result r = summarize(s, cpu_ranks(2), SharingMode::automatic, three_repetitions(), std::nullopt, alone);
  ASSERT_EQ(r.tenants.size(), 2u);
  const TenantResult& q = r.tenants[1];
  EXPECT_EQ(q.primary, PrimaryMetric::items);
  EXPECT_EQ(q.unit, "request/s");
  EXPECT_REL(q.throughput.median, 4 / 0.4);  // 4 requests per 0.4 s window
  EXPECT_REL(*q.slowdown, 0.5);               // faster than its baseline: < 1
  ASSERT_TRUE(q.latency.has_value());
  EXPECT_EQ(q.latency->count, 12);
  // p99 of eleven 0.1 and one 0.2: position 10.89, 0.1 + 0.89 x 0.1
  EXPECT_REL(q.latency->p99, 0.189);
  EXPECT_REL(*q.alone_latency_p99_s, 0.05);
  EXPECT_REL(*q.latency_p99_ratio, 0.189 / 0.05);
  // The matmul tenant has no baseline here.
  EXPECT_FALSE(r.tenants[0].slowdown.has_value());
  EXPECT_FALSE(r.tenants[0].latency.has_value());
  // The mix record itself: no overall latency; the rank still has its own.
  EXPECT_FALSE(r.latency.has_value());
  ASSERT_TRUE(r.ranks[1].latency_s.has_value());
  EXPECT_EQ(r.ranks[1].latency_s->count, 12);
  EXPECT_FALSE(r.ranks[0].latency_s.has_value());
  const nlohmann::json j = json_of(r);
  EXPECT_EQ(j["tenants"][1]["latency"]["source"], "host_steady_clock");
  EXPECT_EQ(j["tenants"][1]["latency"]["overall"]["count"], 12);
  EXPECT_EQ(j["tenants"][1]["params"], (nlohmann::json{{"hidden", 64}}));
  EXPECT_EQ(j["tenants"][1]["primary_metric"], "item_per_s");
  EXPECT_EQ(j["tenants"][1]["primary_unit"], "request/s");
  EXPECT_NEAR(j["tenants"][1]["latency_p99_ratio"].get<double>(), 0.189 / 0.05, 1e-12);
}

TEST(SummarizeMix, NonMixRecordsHaveNoTenants) {
  const Result r = summarize(allreduce_samples(), cpu_ranks(2), SharingMode::automatic, three_repetitions(), 1.0,
                             mix_baselines());
  EXPECT_TRUE(r.tenants.empty());
  for (const auto& rr : r.ranks) EXPECT_FALSE(rr.tenant.has_value());
  const nlohmann::json j = json_of(r);
  EXPECT_TRUE(j["tenants"].is_null());
}

TEST(SummarizeMix, AFailedMixHasAnEmptyTenantList) {
  ConfigSamples s = mix_samples();
  s.error = "rank 2: out of memory";
  const Result r = summarize(s, cpu_ranks(3), SharingMode::automatic, three_repetitions(), std::nullopt);
  EXPECT_TRUE(r.failed());
  const nlohmann::json j = json_of(r);
  EXPECT_EQ(j["status"], "failed");
  EXPECT_EQ(j["tenants"], nlohmann::json::array());
  EXPECT_TRUE(j["latency"].is_null());
  EXPECT_TRUE(j["collective"].is_null());
}

// ---------------------------------------------------------------- HostAllreduce

TEST(HostAllreduce, ExpectedIsTheSumOfTheContributions) {
  for (int ranks : {1, 2, 3, 4, 7, 64, 1000}) {
    for (std::int64_t index : {std::int64_t{0}, std::int64_t{1}, std::int64_t{4}, std::int64_t{5}, std::int64_t{9},
                               std::int64_t{123456789}, (std::int64_t{1} << 40) + 3}) {
      double sum = 0;
      for (int r = 0; r < ranks; ++r) sum += HostAllreduce::contribution(index, r);
      EXPECT_EQ(sum, HostAllreduce::expected(index, ranks)) << ranks << " ranks, index " << index;
    }
  }
}

TEST(HostAllreduce, HandComputedValues) {
  EXPECT_EQ(HostAllreduce::contribution(0, 0), 1.0);
  EXPECT_EQ(HostAllreduce::contribution(7, 2), 3.0 + 2.0);
  EXPECT_EQ(HostAllreduce::contribution(4, 0), 5.0);
  EXPECT_EQ(HostAllreduce::contribution(5, 0), 1.0);  // i mod 5
  EXPECT_EQ(HostAllreduce::expected(0, 1), 1.0);
  EXPECT_EQ(HostAllreduce::expected(4, 2), 3.0 + 8.0);
  EXPECT_EQ(HostAllreduce::expected(7, 4), 10.0 + 8.0);
  EXPECT_EQ(HostAllreduce::expected(9, 3), 6.0 + 12.0);
}

// A sum that misses a rank, or holds one rank's values twice, is caught.
TEST(HostAllreduce, AMissingOrRepeatedRankChangesTheSum) {
  for (int ranks : {2, 3, 8}) {
    for (std::int64_t index = 0; index < 10; ++index) {
      const double want = HostAllreduce::expected(index, ranks);
      EXPECT_NE(HostAllreduce::expected(index, ranks - 1), want);
      for (int r = 0; r < ranks; ++r) {
        EXPECT_GT(HostAllreduce::contribution(index, r), 0) << "dropping rank " << r << " must change the sum";
        for (int other = 0; other < r; ++other) {
          EXPECT_NE(HostAllreduce::contribution(index, r), HostAllreduce::contribution(index, other))
              << "rank " << r << " in place of rank " << other << " must change the sum";
        }
      }
    }
  }
}

}  // namespace
}  // namespace mpsb
