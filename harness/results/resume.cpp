#include "results/resume.hpp"

#include <fstream>
#include <sstream>

#include "results/result_files.hpp"
#include "results/result_json.hpp"
#include "runtime/usage_error.hpp"

namespace mpsb {
namespace {

using ojson = nlohmann::ordered_json;

[[noreturn]] void refuse(const std::string& why) {
  throw UsageError("--resume: " + why + "; start a fresh run instead");
}

std::string describe(const ojson& value) {
  std::string text = value.dump();
  if (text.size() > 80) text = text.substr(0, 77) + "...";
  return text;
}

// A required member, or a refusal naming its path. The names are plain
// pointers: a reference parameter bound to a temporary std::string would make
// GCC 13 (-Wdangling-reference) suspect the returned reference, which points
// into `object`.
const ojson& member(const ojson& object, const char* key, const char* where) {
  if (!object.is_object() || !object.contains(key)) refuse(std::string("the file has no ") + where + key);
  return object.at(key);
}

void expect_equal(const ojson& found, const ojson& expected, const std::string& what) {
  if (found != expected) {
    refuse("the file's " + what + " " + describe(found) + " differs from this run's " + describe(expected));
  }
}

// `record` as this version writes it: a version 2 record gets the kind its
// kernel implies (first, where to_json puts it); a version 3 record must
// already say it.
ojson in_current_format(const ojson& record, int version) {
  const char* kind = record_kind(member(record, "kernel", "results[].").get<std::string>());
  if (version >= 3) {
    const ojson& found = member(record, "kind", "results[].");
    if (found != kind) refuse("a result's kind " + describe(found) + " does not match its kernel (" + kind + ")");
    return record;
  }
  ojson upgraded = {{"kind", kind}};
  for (const auto& [name, value] : record.items()) upgraded[name] = value;
  return upgraded;
}

}  // namespace

ojson read_results_file(const std::string& path) {
  check_resume_file(path);
  std::ifstream in(path);
  if (!in) throw UsageError("--resume: cannot read '" + path + "'");
  std::ostringstream text;
  text << in.rdbuf();
  try {
    return ojson::parse(text.str());
  } catch (const std::exception&) {
    throw UsageError("--resume: '" + path + "' is not a JSON document");
  }
}

std::vector<std::optional<ojson>> resumable_results(const ojson& doc, const RunIdentity& current) {
  if (!doc.is_object() || doc.value("schema", std::string()) != "mpsbench-results") {
    refuse("the file is not an mpsbench-results document");
  }
  const ojson& version = member(doc, "schema_version", "");
  if (!version.is_number_integer() || version < kOldestResumableSchemaVersion || version > kResultsSchemaVersion) {
    refuse("the file's schema_version " + describe(version) + " is not one this mpsbench continues (" +
           std::to_string(kOldestResumableSchemaVersion) + " to " + std::to_string(kResultsSchemaVersion) + ")");
  }
  const ojson& context = member(doc, "context", "");
  expect_equal(member(member(context, "mpi", "context."), "world_size", "context.mpi."), current.world_size,
               "world size");
  expect_equal(member(member(context, "device", "context."), "used", "context.device."), current.device,
               "device");
  expect_equal(member(context, "mode_requested", "context."), current.mode, "mode");
  const ojson expected_plan = plan_json(current.plan);
  expect_equal(member(context, "plan", "context."), expected_plan, "configuration set");

  std::vector<std::optional<ojson>> out(current.plan.size());
  const ojson& results = member(doc, "results", "");
  if (!results.is_array()) refuse("the file's results are not a list");
  for (const auto& r : results) {
    const ojson key = {{"kernel", member(r, "kernel", "results[].")},
                       {"precision", member(r, "precision", "results[].")},
                       {"size", member(r, "size", "results[].")},
                       {"ranks_per_gpu", member(r, "ranks_per_gpu", "results[].")},
                       {"params", member(r, "params", "results[].")}};
    const ojson& status = member(r, "status", "results[].");
    if (status != "ok" && status != "failed") refuse("a result has status " + describe(status));
    std::size_t i = 0;
    while (i < expected_plan.size() && expected_plan[i] != key) ++i;
    if (i == expected_plan.size()) refuse("the file holds a result outside the plan: " + describe(key));
    if (!out[i]) out[i] = in_current_format(r, version.get<int>());
  }
  return out;
}

std::map<std::tuple<std::string, std::string, std::int64_t>, double> one_rank_baselines(
    const std::vector<std::optional<ojson>>& slots) {
  std::map<std::tuple<std::string, std::string, std::int64_t>, double> out;
  for (const auto& r : slots) {
    if (!r || (*r)["status"] != "ok" || (*r)["ranks_per_gpu"] != 1) continue;
    const std::string metric = (*r)["primary_metric"].get<std::string>();
    const auto& primary = (*r)["aggregate"][metric];
    out[std::make_tuple((*r)["kernel"].get<std::string>(), (*r)["precision"].get<std::string>(),
                        (*r)["size"].get<std::int64_t>())] = primary["median"].get<double>();
  }
  return out;
}

TenantBaselines tenant_baselines(const std::vector<std::optional<ojson>>& slots) {
  TenantBaselines out;
  for (const auto& r : slots) {
    if (!r || (*r)["status"] != "ok" || (*r)["kernel"] == kMixKernel) continue;
    const std::string metric = (*r)["primary_metric"].get<std::string>();
    TenantBaseline b;
    b.throughput = (*r)["aggregate"][metric]["median"].get<double>();
    if (r->contains("latency") && !(*r)["latency"].is_null()) b.latency_p99_s = (*r)["latency"]["overall"]["p99"].get<double>();
    out[std::make_tuple((*r)["kernel"].get<std::string>(), (*r)["precision"].get<std::string>(),
                        (*r)["size"].get<std::int64_t>(), (*r)["ranks_per_gpu"].get<int>())] = b;
  }
  return out;
}

}  // namespace mpsb
