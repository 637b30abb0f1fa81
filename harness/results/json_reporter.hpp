// Keeps the results file complete at every moment: it is rewritten atomically
// (and flushed to disk) after each configuration, so a killed run keeps every
// finished result. Each record is serialized once: a write joins their texts.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "results/reporter.hpp"

namespace mpsb {

class JsonReporter final : public Reporter {
 public:
  // `slots`: one per configuration of the plan, holding the records a resumed
  // run already has; the file lists the present ones in plan order.
  JsonReporter(std::string path, std::vector<std::optional<nlohmann::ordered_json>> slots)
      : path_(std::move(path)), results_(std::move(slots)) {}
  void report_context(const Context& context) override;
  void report_result(const Result& result, int index, int total) override;
  // Kept in memory: the next write (the next result's or finish's) has it.
  void report_timing(int index, const ConfigTiming& timing) override;
  void finish(const JobTiming& job) override;
  const std::string& path() const { return path_; }

 private:
  void write(bool complete);
  std::string path_;
  nlohmann::ordered_json context_;
  std::vector<std::optional<nlohmann::ordered_json>> results_;
  std::vector<std::string> texts_;  // per slot: its record's text, "" until dumped (or after a change)
  std::string skeleton_;            // the document without records, for `skeleton_complete_`
  bool skeleton_complete_ = false;
};

}  // namespace mpsb
