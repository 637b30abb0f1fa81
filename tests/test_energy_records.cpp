// A result's energy, GPU activity and timing from known telemetry (issues 27
// and 28): exact joules per unit, the reasons where a figure is missing, the
// metered stretch's length, the workloads kept between configurations and
// the console's time line.
#include <gtest/gtest.h>

#include "measure/gpu_watch.hpp"
#include "measure/instance_cache.hpp"
#include "measure/warmup.hpp"
#include "registry.hpp"
#include "results/energy_json.hpp"
#include "results/energy_record.hpp"
#include "results/json_reporter.hpp"
#include "results/result_json.hpp"
#include "results/time_summary.hpp"
#include "results/timing_json.hpp"
#include "runtime/steady_clock.hpp"
#include "scratch_dir.hpp"
#include "telemetry/fake_counters.hpp"
#include "telemetry/gpu_monitor.hpp"

#include <fstream>
#include <sstream>

namespace mpsb {
namespace {

GpuTelemetry gpu(int index, double watts, double uncertainty) {
  GpuTelemetry t;
  t.gpu_index = index;
  t.gpu_uuid = "GPU-" + std::to_string(index);
  t.host = "node1";
  t.energy_available = true;
  t.mean_power_w = watts;
  t.energy_span_s = 0.8 + 0.1 * index;
  t.energy_uncertainty = uncertainty;
  t.energy_ticks = 9;
  t.activity_available = true;
  t.activity = GpmFigures{80.0 + index * 10, 40.0, 30.0, std::nullopt};
  t.activity_span_s = 1.0;
  return t;
}

TEST(EnergyRecord, JoulesAreMeanPowerTimesKeptWindowsSummedOverGpus) {
  const std::vector<double> windows{0.25, 0.25, 0.5};  // 1 s kept
  const EnergyRecord e = energy_record({gpu(0, 200, 0.01), gpu(1, 300, 0.03)}, windows, 4e12, "FLOP", false);
  ASSERT_TRUE(e.available) << e.reason;
  EXPECT_DOUBLE_EQ(e.joules, 500.0);
  EXPECT_DOUBLE_EQ(e.mean_power_w, 500.0);
  EXPECT_DOUBLE_EQ(e.joules_per_unit, 500.0 / 4e12);
  EXPECT_EQ(e.unit, "J/FLOP");
  EXPECT_DOUBLE_EQ(e.span_s, 0.8);
  EXPECT_DOUBLE_EQ(e.uncertainty, (0.01 * 200 + 0.03 * 300) / 500.0);
  EXPECT_NE(e.method.find("inside the metered span"), std::string::npos);
  const auto j = energy_json(e);
  EXPECT_TRUE(j["available"].get<bool>());
  EXPECT_EQ(j["per_gpu"].size(), 2u);
  EXPECT_DOUBLE_EQ(j["per_gpu"][1]["mean_power_w"].get<double>(), 300.0);
  EXPECT_FALSE(j.contains("reason"));
}

TEST(EnergyRecord, MissingFiguresSayWhyAndCarryNoNumbers) {
  EnergyRecord e = energy_record({}, {1.0}, 1.0, "FLOP", true);
  EXPECT_FALSE(e.available);
  EXPECT_EQ(e.reason, "cpu device");
  auto j = energy_json(e);
  EXPECT_FALSE(j.contains("joules"));
  EXPECT_EQ(j["reason"], "cpu device");
  GpuTelemetry no_permission = gpu(1, 0, 0);
  no_permission.energy_available = false;
  no_permission.energy_reason = "nvmlDeviceGetTotalEnergyConsumption: Insufficient Permissions (4)";
  e = energy_record({gpu(0, 200, 0.01), no_permission}, {1.0}, 1.0, "FLOP", false);
  EXPECT_FALSE(e.available);
  EXPECT_EQ(e.reason, "GPU 1 on node1: nvmlDeviceGetTotalEnergyConsumption: Insufficient Permissions (4)");
  EXPECT_EQ(failed_energy_record().reason.find("the configuration failed"), 0u);
}

TEST(EnergyRecord, AWarmupUpdateIsNamedInTheMethod) {
  GpuTelemetry g = gpu(0, 100, 0.1);
  g.energy_extended = true;
  const EnergyRecord e = energy_record({g}, {0.2}, 2.0, "request", false);
  ASSERT_TRUE(e.available);
  EXPECT_DOUBLE_EQ(e.joules_per_unit, 10.0);
  EXPECT_EQ(e.unit, "J/request");
  EXPECT_NE(e.method.find("warm-up"), std::string::npos);
}

TEST(ActivityRecord, MeansOverTheGpusPerFigure) {
  const ActivityRecord a = activity_record({gpu(0, 1, 0), gpu(1, 1, 0)}, false);
  ASSERT_TRUE(a.available) << a.reason;
  EXPECT_DOUBLE_EQ(*a.mean.sm_active, 85.0);
  EXPECT_DOUBLE_EQ(*a.mean.sm_occupancy, 40.0);
  EXPECT_FALSE(a.mean.tensor_active.has_value());
  const auto j = activity_json(a);
  EXPECT_TRUE(j["tensor_active"].is_null());  // missing, never 0
  EXPECT_DOUBLE_EQ(j["per_gpu"][1]["sm_active"].get<double>(), 90.0);
  GpuTelemetry pre_hopper = gpu(2, 1, 0);
  pre_hopper.activity_available = false;
  pre_hopper.activity_reason = "GPM not supported on this GPU (Hopper or newer needed)";
  const ActivityRecord b = activity_record({gpu(0, 1, 0), pre_hopper}, false);
  EXPECT_FALSE(b.available);
  EXPECT_NE(b.reason.find("Hopper"), std::string::npos);
  EXPECT_EQ(activity_record({}, true).reason, "cpu device");
}

// A broken GPM counter (issue 36): mpsbench's own path (the watch, the record, its JSON) writes no figure of
// it, only the reason, so the file is one the analysis accepts. The fake's reads take 0.12 s each, so its
// two samples lie GPM's 0.1 s apart without the test waiting.
TEST(ActivityRecord, ABrokenCounterGivesNoFigureOnlyItsReason) {
  FakeGpu g;
  g.uuid = "GPU-broken";
  g.figures = GpmFigures{250.0, 40.0, 30.0, 10.0};
  g.call_s = 0.12;
  JobMonitor job;
  job.monitor = std::make_unique<GpuMonitor>(make_fake_counters(g));
  job.gpu_index = 0;
  job.gpu_uuid = g.uuid;
  GpuTelemetry t;
  {
    GpuWatch watch(job);
    watch.span_begins(now_seconds());
    t = watch.span_ends();
  }
  EXPECT_FALSE(t.activity_available);
  EXPECT_NE(t.activity_reason.find("SM active 250%"), std::string::npos) << t.activity_reason;
  const auto j = activity_json(activity_record({t}, false));
  EXPECT_FALSE(j.at("available").get<bool>());
  EXPECT_FALSE(j.contains("sm_active"));
  EXPECT_NE(j.at("reason").get<std::string>().find("a broken counter"), std::string::npos) << j.dump();
  EXPECT_FALSE(j.at("per_gpu").at(0).contains("sm_active"));
}

TEST(EnergyStretch, BatchesUntilTheFewestRepetitionsWouldCompleteTheSpan) {
  MeasureSettings s;
  s.repetitions = 3;
  s.energy_min_span_s = 0;
  EXPECT_FALSE(stretch_more(s, 0, 0.05, 0));
  s.energy_min_span_s = 1;
  EXPECT_TRUE(stretch_more(s, 0, 0.05, 0));
  EXPECT_TRUE(stretch_more(s, 0.80, 0.05, 16));   // 0.80 + 3 x 0.05 < 1
  EXPECT_FALSE(stretch_more(s, 0.85, 0.05, 17));  // 0.85 + 0.15 = 1
  EXPECT_FALSE(stretch_more(s, 0, 0.4, 0));       // three repetitions already last 1.2 s
  EXPECT_FALSE(stretch_more(s, 0, 1e-6, kMaxStretchBatches));  // a runaway calibration stops here
}

std::unique_ptr<Workload> cpu_matmul(std::int64_t n) {
  WorkloadArgs args;
  args.device = DeviceKind::cpu;
  args.precision = "fp32";
  args.size = n;
  auto w = find_kernel("matmul")->make(args);
  w->setup(1);
  return w;
}

TEST(InstanceCache, KeepsTheSameWorkloadAcrossRankCountsOnly) {
  const Config k1{"matmul", "fp32", 32, 1, {}, {}}, k4{"matmul", "fp32", 32, 4, {}, {}};
  const Config other_size{"matmul", "fp32", 48, 1, {}, {}}, other_precision{"matmul", "bf16", 32, 1, {}, {}};
  EXPECT_TRUE(same_workload(k1, k4));
  EXPECT_FALSE(same_workload(k1, other_size));
  EXPECT_FALSE(same_workload(k1, other_precision));
  const Config mix{"mix", "matmul/fp32/32:1,nbody/fp32/64:1", 0, 2, {}, {Tenant{}, Tenant{}}};
  EXPECT_FALSE(same_workload(mix, mix));

  InstanceCache cache;
  cache.prepare(k1, 2);
  cache.slot(0).config = k1;
  cache.slot(0).workload = cpu_matmul(32);
  cache.slot(1).config = k1;
  cache.slot(1).workload = cpu_matmul(32);
  Workload* kept = cache.slot(0).workload.get();
  cache.prepare(k4, 4);  // same workload at more ranks: kept, room for four
  EXPECT_EQ(cache.slot(0).workload.get(), kept);
  EXPECT_FALSE(cache.slot(3).workload);
  cache.prepare(other_size, 1);  // another size: everything goes, its memory with it
  EXPECT_FALSE(cache.slot(0).workload);
  EXPECT_FALSE(cache.slot(1).workload);
}

TEST(TimeSummary, OutsideIsEverythingButWindowsAndWarmup) {
  ConfigTiming t;
  t.setup_s = 1;
  t.first_run_s = 0.5;
  t.warmup_s = 2;
  t.repetitions_s = 3.5;
  t.windows_s = 3;
  t.verification_s = 1;
  t.gather_s = 0.25;
  t.report_s = 0.25;
  t.wall_s = 8.5;
  JobTiming job;
  job.configurations_s = 17.5;
  job.total_s = 20;
  const KernelTimings configs{{"matmul", t}, {"nbody", t}};
  const std::string line = time_summary_line(configs, job);
  EXPECT_NE(line.find("time: 20.0 s in all; windows 6.00 s, warm-up 4.00 s, outside 10.0 s (50.0%)"), std::string::npos)
      << line;
  EXPECT_NE(line.find("start-up 2.50 s, setup 2.00 s, first runs 1.00 s, gaps between windows 1.00 s"),
            std::string::npos)
      << line;
  EXPECT_NE(line.find("between configurations 0.50 s"), std::string::npos) << line;
  const std::string table = time_by_kernel(configs);
  EXPECT_NE(table.find("matmul"), std::string::npos);
  EXPECT_NE(table.find("nbody"), std::string::npos);
}

// The reporter joins cached record texts: byte for byte the document results_document() dumps, with each
// result's final timing and the job's at the end.
TEST(JsonReporter, CachedTextsMakeTheSameDocument) {
  ScratchDir dir;
  const std::string path = dir / "results.json";
  Context context;
  context.version = "0.1.0";
  context.date_utc = "2026-11-25T00:00:00Z";
  Result a, b;
  a.config = Config{"matmul", "fp32", 64, 1, {}, {}};
  a.verified = true;
  b.config = Config{"matmul", "fp32", 64, 2, {}, {}};
  b.error = "out of memory";
  JsonReporter json(path, std::vector<std::optional<nlohmann::ordered_json>>(3));
  json.report_context(context);
  json.report_result(a, 1, 3);
  ConfigTiming t;
  t.wall_s = 1.5;
  t.report_s = 0.25;
  json.report_timing(1, t);
  json.report_result(b, 3, 3);
  JobTiming job;
  job.total_s = 9;
  json.finish(job);
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  a.timing = t;
  context.timing = job;
  EXPECT_EQ(text.str(), results_document(to_json(context), {to_json(a), to_json(b)}, true).dump(2) + "\n");
}

// A command line with bytes that are not UTF-8 (a file name in another encoding) is written, as U+FFFD, to a
// path with those bytes: the job's results are never lost to the serializer (it threw type_error 316).
TEST(JsonReporter, BytesThatAreNotUtf8AreWrittenAsReplacementCharacters) {
  ScratchDir dir;
  const std::string path = dir / "r\xff\xfe.json";
  Context context;
  context.version = "0.1.0";
  context.argv = {"mpsbench", "--output", path};
  Result a;
  a.config = Config{"matmul", "fp32", 64, 1, {}, {}};
  a.error = "bad \xc3 byte";
  JsonReporter json(path, std::vector<std::optional<nlohmann::ordered_json>>(1));
  json.report_context(context);
  json.report_result(a, 1, 1);
  json.finish(JobTiming{});
  std::ifstream in(path);
  ASSERT_TRUE(in) << "nothing written";
  const auto doc = nlohmann::json::parse(in);
  EXPECT_EQ(doc["context"]["argv"][2].get<std::string>().substr(dir.path().string().size()),
            "/r\xEF\xBF\xBD\xEF\xBF\xBD.json");
  EXPECT_EQ(doc["results"][0]["error"], "bad \xEF\xBF\xBD byte");
}

}  // namespace
}  // namespace mpsb
