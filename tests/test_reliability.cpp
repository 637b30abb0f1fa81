// MPSBENCH_FAULT parsing and the --resume compatibility checks.
#include <gtest/gtest.h>

#include "results/result_json.hpp"
#include "results/resume.hpp"
#include "runtime/fault_injection.hpp"
#include "runtime/values.hpp"
#include "usage_error_text.hpp"

namespace mpsb {
namespace {

using ojson = nlohmann::ordered_json;

std::string usage_error(const std::string& spec) {
  return usage_error_text([&] { parse_fault_spec(spec); });
}

TEST(FaultSpec, ParsesEveryKind) {
  const FaultSpec a = parse_fault_spec("abort:rank=1:config=3");
  EXPECT_EQ(a.kind, FaultKind::abort);
  EXPECT_EQ(a.rank, 1);
  EXPECT_EQ(a.config, 3);
  EXPECT_EQ(parse_fault_spec("oom:rank=0:config=2").kind, FaultKind::oom);
  EXPECT_EQ(parse_fault_spec("hang:rank=12:config=1").rank, 12);
  EXPECT_EQ(parse_fault_spec("throttle:rank=1:config=2").kind, FaultKind::throttle);
  const FaultSpec slow = parse_fault_spec("cpu_slow:rank=1:config=2");
  EXPECT_EQ(slow.kind, FaultKind::cpu_slow);
  EXPECT_EQ(slow.rank, 1);
  EXPECT_EQ(slow.config, 2);
}

TEST(FaultSpec, RejectsMalformedSpecsInOneLineNamingThePart) {
  const std::pair<std::string, std::string> cases[] = {
      {"", "malformed ''"},
      {"abort", "malformed 'abort'"},
      {"abort:rank=1", "malformed"},
      {"abort:rank=1:config=3:extra", "malformed"},
      {"crash:rank=1:config=3", "unknown fault 'crash'"},
      {"cpu-slow:rank=1:config=3", "unknown fault 'cpu-slow'"},
      {"abort:config=3:rank=1", "expected 'rank=N'"},
      {"abort:rank=x:config=3", "'x'"},
      {"abort:rank=-1:config=3", "-1"},
      {"abort:rank=1:config=0", "0"},
      {"abort:rank=1:config=", "config"},
      {"oom:rank=1:config=99999999999999999999", "99999999999999999999"},
  };
  for (const auto& [spec, part] : cases) {
    const std::string message = usage_error(spec);
    EXPECT_NE(message.find("MPSBENCH_FAULT"), std::string::npos) << spec << ": " << message;
    EXPECT_NE(message.find(part), std::string::npos) << spec << ": " << message;
    EXPECT_EQ(message.find('\n'), std::string::npos) << spec;
  }
}

RunIdentity sample_identity() {
  return RunIdentity{{{"matmul", "fp32", 16, 1, {}, {}}, {"matmul", "fp32", 16, 2, {}, {}}, {"matmul", "fp32", 24, 1, {}, {}}},
                     "cpu", "auto", 2};
}

ojson record(const Config& c, const std::string& status) {
  return ojson{{"kind", record_kind(c.kernel)}, {"kernel", c.kernel}, {"precision", c.precision}, {"size", c.size},
               {"ranks_per_gpu", c.ranks_per_gpu}, {"params", ojson::object()}, {"status", status}};
}

ojson sample_document(const RunIdentity& id, std::vector<ojson> results) {
  const ojson context = {{"mpi", {{"world_size", id.world_size}}},
                         {"device", {{"used", id.device}}},
                         {"mode_requested", id.mode},
                         {"plan", plan_json(id.plan)}};
  return results_document(context, results, false);
}

std::string refusal(const ojson& doc, const RunIdentity& id) {
  return usage_error_text([&] { resumable_results(doc, id); });
}

TEST(Resume, KeepsFinishedRecordsByPlanIndex) {
  const RunIdentity id = sample_identity();
  const auto doc = sample_document(id, {record(id.plan[0], "ok"), record(id.plan[2], "failed"),
                                        record(id.plan[0], "ok")});
  const auto slots = resumable_results(doc, id);
  ASSERT_EQ(slots.size(), 3u);
  EXPECT_TRUE(slots[0].has_value());
  EXPECT_FALSE(slots[1].has_value());
  ASSERT_TRUE(slots[2].has_value());
  EXPECT_EQ((*slots[2])["status"], "failed");
}

TEST(Resume, ContinuesAVersion2FileGivingEachRecordItsKind) {
  const RunIdentity id = sample_identity();
  ojson v2_record = record(id.plan[1], "ok");
  v2_record.erase("kind");
  auto doc = sample_document(id, {v2_record});
  doc["schema_version"] = 2;
  const auto slots = resumable_results(doc, id);
  ASSERT_TRUE(slots[1].has_value());
  EXPECT_EQ(slots[1]->begin().key(), "kind");  // first, where to_json writes it
  EXPECT_EQ((*slots[1])["kind"], "kernel");
  EXPECT_EQ(slots[1]->size(), v2_record.size() + 1);
  EXPECT_EQ(record_kind(kMixKernel), std::string("mix"));
}

TEST(Resume, RefusesAVersion3RecordWithoutItsKindAndOlderVersions) {
  const RunIdentity id = sample_identity();
  ojson no_kind = record(id.plan[0], "ok");
  no_kind.erase("kind");
  EXPECT_NE(refusal(sample_document(id, {no_kind}), id).find("the file has no results[].kind"), std::string::npos);
  ojson wrong = record(id.plan[0], "ok");
  wrong["kind"] = "mix";
  EXPECT_NE(refusal(sample_document(id, {wrong}), id)
                .find("a result's kind \"mix\" does not match its kernel (kernel)"),
            std::string::npos);
  auto v1 = sample_document(id, {record(id.plan[0], "ok")});
  v1["schema_version"] = 1;
  EXPECT_EQ(refusal(v1, id), "--resume: the file's schema_version 1 is not one this mpsbench continues (2 to 3); "
                             "start a fresh run instead");
}

TEST(Resume, RefusesAnotherRun) {
  const RunIdentity id = sample_identity();
  const auto good = sample_document(id, {record(id.plan[0], "ok")});
  EXPECT_EQ(refusal(good, id), "");

  auto version = good;
  version["schema_version"] = kResultsSchemaVersion + 1;
  EXPECT_NE(refusal(version, id).find("schema_version"), std::string::npos);
  auto not_ours = good;
  not_ours["schema"] = "something-else";
  EXPECT_NE(refusal(not_ours, id).find("not an mpsbench-results document"), std::string::npos);

  RunIdentity other = id;
  other.world_size = 4;
  EXPECT_NE(refusal(good, other).find("world size"), std::string::npos);
  other = id;
  other.device = "gpu";
  EXPECT_NE(refusal(good, other).find("device"), std::string::npos);
  other = id;
  other.mode = "streams";
  EXPECT_NE(refusal(good, other).find("mode"), std::string::npos);
  other = id;
  other.plan[1].size = 40;
  EXPECT_NE(refusal(good, other).find("configuration set"), std::string::npos);

  auto no_plan = good;
  no_plan["context"].erase("plan");
  EXPECT_NE(refusal(no_plan, id).find("context.plan"), std::string::npos);
  auto stray = sample_document(id, {record(Config{"nbody", "fp32", 16, 1, {}, {}}, "ok")});
  EXPECT_NE(refusal(stray, id).find("outside the plan"), std::string::npos);
  auto running = sample_document(id, {record(id.plan[0], "running")});
  EXPECT_NE(refusal(running, id).find("status"), std::string::npos);
  for (const auto& doc : {version, not_ours, no_plan, stray}) {
    EXPECT_EQ(refusal(doc, id).find('\n'), std::string::npos);
  }
}

}  // namespace
}  // namespace mpsb
