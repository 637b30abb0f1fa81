#include "json_reporter.hpp"

#include "atomic_file.hpp"
#include "result_json.hpp"

namespace mpsb {

void JsonReporter::report_context(const Context& context) {
  context_ = to_json(context);
  write(false);
}

void JsonReporter::report_result(const Result& result, int /*index*/, int /*total*/) {
  results_.push_back(to_json(result));
  write(false);
}

void JsonReporter::finish() { write(true); }

void JsonReporter::write(bool complete) {
  write_file_atomically(path_, results_document(context_, results_, complete).dump(2) + "\n");
}

}  // namespace mpsb
