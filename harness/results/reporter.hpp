// Where results go. Rank 0 hands every reporter the run's context once, each
// result as soon as it exists, then that result's final timing (its report
// and wall time include the reporters themselves), and calls finish() with
// the job's timing at the end.
#pragma once

#include "results/result.hpp"

namespace mpsb {

class Reporter {
 public:
  virtual ~Reporter() = default;
  virtual void report_context(const Context& context) = 0;
  virtual void report_result(const Result& result, int index, int total) = 0;
  // The timing of the result reported last as `index`, now that every reporter has had it.
  virtual void report_timing(int index, const ConfigTiming& timing) = 0;
  virtual void finish(const JobTiming& job) = 0;
};

}  // namespace mpsb
