// Human output on rank 0: a banner, one progress line per configuration and
// a final table.
#pragma once

#include <optional>
#include <ostream>
#include <string>
#include <vector>

#include "results/reporter.hpp"

namespace mpsb {

class ConsoleReporter final : public Reporter {
 public:
  ConsoleReporter(std::ostream& out, std::string results_path, int planned)
      : out_(out), results_path_(std::move(results_path)), planned_(planned) {}
  void report_context(const Context& context) override;
  void report_result(const Result& result, int index, int total) override;
  void report_timing(int index, const ConfigTiming& timing) override;
  void finish(const JobTiming& job) override;

 private:
  std::ostream& out_;
  std::string results_path_;
  int planned_;
  std::vector<Result> results_;
  std::optional<double> max_noise_;  // from the context, for the legend
  double clock_threshold_ = 0.9;
  double cpu_threshold_ = MeasureSettings{}.cpu_threshold;
};

// "48.2 TFLOP/s", "3.10 G interaction/s"
std::string format_rate(double per_second, const std::string& unit);

}  // namespace mpsb
