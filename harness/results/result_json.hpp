// The JSON form of the records (schema/mpsbench-results.schema.json). Units
// are part of every field name (_s, _bytes, _per_s) or stated beside it.
#pragma once

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "results/result.hpp"

namespace mpsb {

// 3: every record says its kind (record_kind); 2: the records before it,
// which --resume still continues (resume.cpp gives them their kind).
inline constexpr int kResultsSchemaVersion = 3;
inline constexpr int kOldestResumableSchemaVersion = 2;

// A record's "kind": "mix" for a --mix configuration (kernel "mix"), else
// "kernel". (mpsbench-sweep writes "app" for a farmed application.)
const char* record_kind(const std::string& kernel);

nlohmann::ordered_json to_json(const Context& context);
// The plan as the context records it: [{kernel, precision, size, ranks_per_gpu}].
nlohmann::ordered_json plan_json(const std::vector<Config>& plan);
nlohmann::ordered_json to_json(const Result& result);
// The whole file: {"schema", "schema_version", "complete", "context", "results"}.
nlohmann::ordered_json results_document(const nlohmann::ordered_json& context,
                                        const std::vector<nlohmann::ordered_json>& results, bool complete);

}  // namespace mpsb
