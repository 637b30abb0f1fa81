// Validation of a results document against the JSON Schema with valijson:
// shared by the schema unit tests and the validator the MPI tests run. Defined once in
// schema_validation.cpp (library mpsbench_schema_validation): valijson's templates are the
// slowest code of the build to compile, so no other file includes them.
#pragma once

#include <string>

#include <nlohmann/json.hpp>

namespace mpsb {

// "" when `document` is valid, else one line per violation ("path: what").
std::string schema_errors(const nlohmann::json& schema_json, const nlohmann::json& document);

}  // namespace mpsb
