#include "results/json_reporter.hpp"

#include "results/result_json.hpp"
#include "runtime/atomic_file.hpp"

namespace mpsb {

void JsonReporter::report_context(const Context& context) {
  context_ = to_json(context);
  write(false);
}

void JsonReporter::report_result(const Result& result, int index, int /*total*/) {
  const auto slot = static_cast<std::size_t>(index - 1);
  if (slot >= results_.size()) results_.resize(slot + 1);
  results_[slot] = to_json(result);
  write(false);
}

void JsonReporter::finish() { write(true); }

void JsonReporter::write(bool complete) {
  std::vector<nlohmann::ordered_json> present;
  for (const auto& r : results_) {
    if (r) present.push_back(*r);
  }
  write_file_atomically(path_, results_document(context_, present, complete).dump(2) + "\n");
}

}  // namespace mpsb
