// Where results go. Rank 0 hands every reporter the run's context once, each
// result as soon as it exists, and calls finish() at the end.
#pragma once

#include "results/result.hpp"

namespace mpsb {

class Reporter {
 public:
  virtual ~Reporter() = default;
  virtual void report_context(const Context& context) = 0;
  virtual void report_result(const Result& result, int index, int total) = 0;
  virtual void finish() = 0;
};

}  // namespace mpsb
