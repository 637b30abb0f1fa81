// Keeps the results file complete at every moment: it is rewritten atomically
// after each configuration, so a killed run keeps every finished result.
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
  void finish() override;
  const std::string& path() const { return path_; }

 private:
  void write(bool complete);
  std::string path_;
  nlohmann::ordered_json context_;
  std::vector<std::optional<nlohmann::ordered_json>> results_;
};

}  // namespace mpsb
