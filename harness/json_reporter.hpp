// Keeps the results file complete at every moment: it is rewritten atomically
// after each configuration, so a killed run keeps every finished result.
#pragma once

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "reporter.hpp"

namespace mpsb {

class JsonReporter final : public Reporter {
 public:
  explicit JsonReporter(std::string path) : path_(std::move(path)) {}
  void report_context(const Context& context) override;
  void report_result(const Result& result, int index, int total) override;
  void finish() override;
  const std::string& path() const { return path_; }

 private:
  void write(bool complete);
  std::string path_;
  nlohmann::ordered_json context_;
  std::vector<nlohmann::ordered_json> results_;
};

}  // namespace mpsb
