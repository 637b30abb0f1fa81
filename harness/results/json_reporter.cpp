#include "results/json_reporter.hpp"

#include "results/result_json.hpp"
#include "results/timing_json.hpp"
#include "runtime/atomic_file.hpp"

namespace mpsb {
namespace {

// `text` (an indented dump) with every line after the first indented by `spaces` more.
std::string indented(const std::string& text, std::size_t spaces) {
  std::string out;
  out.reserve(text.size() + text.size() / 16);
  const std::string pad(spaces, ' ');
  for (char c : text) {
    out += c;
    if (c == '\n') out += pad;
  }
  return out;
}

// What a user typed is recorded as given, and the command line (argv) may hold bytes that are not UTF-8
// (a file name in another encoding): JSON text is UTF-8, so such bytes are written as U+FFFD instead of
// ending the job with a serializer's exception after its work was done.
std::string dumped(const nlohmann::ordered_json& j) {
  return j.dump(2, ' ', false, nlohmann::ordered_json::error_handler_t::replace);
}

}  // namespace

void JsonReporter::report_context(const Context& context) {
  context_ = to_json(context);
  skeleton_.clear();
  write(false);
}

void JsonReporter::report_result(const Result& result, int index, int /*total*/) {
  const auto slot = static_cast<std::size_t>(index - 1);
  if (slot >= results_.size()) results_.resize(slot + 1);
  results_[slot] = to_json(result);
  if (texts_.size() < results_.size()) texts_.resize(results_.size());
  texts_[slot].clear();
  write(false);
}

void JsonReporter::report_timing(int index, const ConfigTiming& timing) {
  const auto slot = static_cast<std::size_t>(index - 1);
  if (slot < results_.size() && results_[slot]) {
    (*results_[slot])["timing"] = timing_json(timing);
    if (slot < texts_.size()) texts_[slot].clear();
  }
}

void JsonReporter::finish(const JobTiming& job) {
  context_["timing"] = job_timing_json(job);
  skeleton_.clear();
  write(true);
}

// Each record is dumped once and kept as text; a write joins the texts into the document
// results_document() describes (the same bytes as its dump(2)), so a job of many
// configurations does not serialize every earlier record again after each one.
void JsonReporter::write(bool complete) {
  if (skeleton_.empty() || skeleton_complete_ != complete) {
    skeleton_ = dumped(results_document(context_, {}, complete));
    skeleton_complete_ = complete;
  }
  if (texts_.size() < results_.size()) texts_.resize(results_.size());
  std::string records;
  for (std::size_t i = 0; i < results_.size(); ++i) {
    if (!results_[i]) continue;
    if (texts_[i].empty()) texts_[i] = indented(dumped(*results_[i]), 4);
    records += (records.empty() ? "\n    " : ",\n    ") + texts_[i];
  }
  static const std::string kEmptyResults = "\"results\": []\n}";
  std::string document = skeleton_;
  if (!records.empty() && document.size() >= kEmptyResults.size() &&
      document.compare(document.size() - kEmptyResults.size(), kEmptyResults.size(), kEmptyResults) == 0) {
    document.resize(document.size() - kEmptyResults.size());
    document += "\"results\": [" + records + "\n  ]\n}";
  } else if (!records.empty()) {  // not the shape expected: the whole document, the slow way
    std::vector<nlohmann::ordered_json> present;
    for (const auto& r : results_) {
      if (r) present.push_back(*r);
    }
    document = dumped(results_document(context_, present, complete));
  }
  write_file_atomically(path_, document + "\n");
}

}  // namespace mpsb
