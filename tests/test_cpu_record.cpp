// A result's `cpu` object (harness/results/cpu_record.hpp, schema
// definitions.cpu): built from the instances' CPU samples after they travel to
// rank 0, written as JSON and valid against the schema, with the three
// settings in the context; unreadable counters give null lists and a note.
#include <gtest/gtest.h>

#include "results/cpu_record.hpp"
#include "results/result.hpp"
#include "results/result_json.hpp"
#include "results_schema.hpp"
#include "summarize_support.hpp"

namespace mpsb {
namespace {

using namespace summarize_test;  // NOLINT: the shared builders of synthetic samples

Context cpu_context(const Placement& placement, const MeasureSettings& settings) {
  Context c;
  c.version = "0.1.0";
  c.git_commit = "0123456789abcdef0123456789abcdef01234567";
  c.date_utc = "2026-11-28T12:00:00Z";
  c.argv = {"mpsbench", "--device", "cpu"};
  c.hosts = {"h"};
  c.mpi_library_version = "Open MPI v4.1.6";
  c.world_size = static_cast<int>(placement.ranks.size());
  c.device_requested = "cpu";
  c.placement = placement;
  c.settings = settings;
  return c;
}

// The results file of one result, as the JSON reporter writes it.
nlohmann::json document(const Placement& p, const MeasureSettings& settings, const Result& r) {
  return nlohmann::json::parse(results_document(to_json(cpu_context(p, settings)), {to_json(r)}, true).dump());
}

// Rank 0 with two instances (as --mode streams runs them), rank 1 with one; the agreed figures on all.
ConfigSamples watched(bool steal_readable) {
  ConfigSamples s;
  s.config = plain("matmul", "fp32", 64, 2);
  s.iterations = 10;
  s.instances_per_rank = 1;
  const double references[] = {4.0e-6, 3.5e-6, 3.0e-6};  // the last is rank 1's: not the first rank's
  for (int i = 0; i < 3; ++i) {
    s.ranks.push_back(instance(i < 2 ? 0 : 1, s.config, 10, {0, 1, 2}, {0.5, 1.4, 2.6}, flops(1e6)));
    s.ranks.back().instance = i < 2 ? i : 0;
    CpuSamples c;
    c.slowed = {false, true, false};
    c.ratio = {1.02, 1.8, 1.0};
    c.steal_s = {0.0, 0.01, 0.0};
    c.run_delay_s = {1e-5, 0.02, 0.0};
    c.steal_known = steal_readable;
    c.discarded = 2;
    c.reference_s = references[i];
    if (!steal_readable && i == 2) c.note = "cannot read /proc/stat";
    s.ranks.back().cpu = c;
    s.ranks.back() = deserialize_samples(serialize(s.ranks.back()));  // as rank 0 receives them
  }
  return s;
}

TEST(CpuRecord, FromTheAgreedSamplesAndTheFirstRanksReference) {
  MeasureSettings settings = three_repetitions();
  settings.cpu_threshold = 0.5;
  const auto c = cpu_record(watched(true), settings);
  ASSERT_TRUE(c.has_value());
  EXPECT_EQ(c->probe, "relax_sweep_2048x8");
  EXPECT_EQ(c->threshold, 0.5);
  EXPECT_EQ(c->reference_s, std::optional<double>(3.5e-6));  // rank 0's two threads; rank 1's 3.0e-6 is not
  EXPECT_EQ(c->slowed_repetitions, 1);
  EXPECT_EQ(c->discarded_repetitions, 2);
  EXPECT_EQ(c->repetition_slowed, (std::vector<bool>{false, true, false}));
  EXPECT_EQ(c->probe_ratio, (std::vector<double>{1.02, 1.8, 1.0}));
  ASSERT_TRUE(c->steal_s && c->run_delay_s);
  EXPECT_EQ(*c->steal_s, (std::vector<double>{0.0, 0.01, 0.0}));
  EXPECT_EQ(c->note, "");
}

TEST(CpuRecord, UnreadableStealIsNullWithTheReason) {
  const auto c = cpu_record(watched(false), three_repetitions());
  ASSERT_TRUE(c.has_value());
  EXPECT_FALSE(c->steal_s.has_value());
  EXPECT_TRUE(c->run_delay_s.has_value());
  EXPECT_EQ(c->note, "cannot read /proc/stat");  // rank 1's, though rank 0 read its own
}

TEST(CpuRecord, HandMadeSamplesWithoutAWatchHaveNone) {
  ConfigSamples s = watched(true);
  for (auto& r : s.ranks) r.cpu.reset();
  EXPECT_FALSE(cpu_record(s, three_repetitions()).has_value());
  const Result r = summarize(s, cpu_ranks(2), SharingMode::automatic, three_repetitions(), 1.0);
  EXPECT_FALSE(json_of(r).contains("cpu"));
}

TEST(CpuRecord, WrittenAndValidAgainstTheSchema) {
  MeasureSettings settings = three_repetitions();
  settings.cpu_threshold = 0.25;
  settings.discard_cpu_slowed = true;
  settings.cpu_retries = 2;
  const Placement p = cpu_ranks(2);
  for (bool readable : {true, false}) {
    const Result r = summarize(watched(readable), p, SharingMode::automatic, settings, 1.0);
    const auto doc = document(p, settings, r);
    EXPECT_EQ(results_schema_errors(doc), "");
    const auto& settings_json = doc["context"]["settings"];
    EXPECT_EQ(settings_json["cpu_threshold"], 0.25);
    EXPECT_EQ(settings_json["discard_cpu_slowed"], true);
    EXPECT_EQ(settings_json["cpu_retries"], 2);
    const auto& cpu = doc["results"][0]["cpu"];
    EXPECT_EQ(cpu["repetition_slowed"], nlohmann::json({false, true, false}));
    EXPECT_EQ(cpu["slowed_repetitions"], 1);
    EXPECT_EQ(cpu["discarded_repetitions"], 2);
    EXPECT_EQ(cpu["threshold"], 0.25);
    EXPECT_EQ(cpu["reference_probe_s"], 3.5e-6);
    EXPECT_EQ(cpu["probe_ratio"].size(), 3u);
    EXPECT_EQ(cpu["steal_s"].is_null(), !readable);
    EXPECT_EQ(cpu["run_delay_s"], nlohmann::json({1e-5, 0.02, 0.0}));
    EXPECT_EQ(cpu["note"], readable ? "" : "cannot read /proc/stat");
  }
  // The schema holds the record to its shape: a broken one is refused.
  const Result r = summarize(watched(true), p, SharingMode::automatic, settings, 1.0);
  const auto doc = document(p, settings, r);
  const std::vector<std::pair<std::string, nlohmann::json>> broken = {
      {"/results/0/cpu/probe", ""},
      {"/results/0/cpu/probe_ratio/0", -1},
      {"/results/0/cpu/repetition_slowed/1", "yes"},
      {"/results/0/cpu/slowed_repetitions", -1},
      {"/results/0/cpu/reference_probe_s", 0},
      {"/results/0/cpu/steal_s/0", -0.5},
      {"/context/settings/cpu_retries", -1},
      {"/context/settings/cpu_threshold", 0},
  };
  for (const auto& [pointer, value] : broken) {
    auto bad = doc;
    bad[nlohmann::json::json_pointer(pointer)] = value;
    EXPECT_NE(results_schema_errors(bad), "") << pointer;
  }
  auto missing = doc;
  missing["results"][0]["cpu"].erase("note");
  EXPECT_NE(results_schema_errors(missing), "");
}

TEST(CpuRecord, FailedConfigurationHasNone) {
  ConfigSamples s = watched(true);
  s.error = "rank 1 on host h: out of host memory";
  const Result r = summarize(s, cpu_ranks(2), SharingMode::automatic, three_repetitions(), std::nullopt);
  EXPECT_FALSE(r.cpu.has_value());
  EXPECT_FALSE(json_of(r).contains("cpu"));
}

}  // namespace
}  // namespace mpsb
