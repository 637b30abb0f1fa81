// schema/mpsbench-results.schema.json (MPSBENCH_SCHEMA_PATH, a definition of the unit-test targets), read
// once, and what a document violates in it: for the unit tests that check what the reporters write.
#pragma once

#include <fstream>
#include <string>

#include <nlohmann/json.hpp>

#include "schema_validation.hpp"

namespace mpsb {

inline const nlohmann::json& results_schema() {
  static const nlohmann::json schema = [] {
    std::ifstream in(MPSBENCH_SCHEMA_PATH);
    return nlohmann::json::parse(in);
  }();
  return schema;
}

// "" when `document` is valid, else one line per violation (schema_errors).
inline std::string results_schema_errors(const nlohmann::json& document) {
  return schema_errors(results_schema(), document);
}

}  // namespace mpsb
