#include "schema_validation.hpp"

#include <valijson/adapters/nlohmann_json_adapter.hpp>
#include <valijson/schema.hpp>
#include <valijson/schema_parser.hpp>
#include <valijson/validator.hpp>

namespace mpsb {

std::string schema_errors(const nlohmann::json& schema_json, const nlohmann::json& document) {
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

}  // namespace mpsb
