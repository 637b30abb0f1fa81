// Bad input, at any layer: a malformed option, environment variable, preset or
// results file, or a plan the job cannot run. The program prints
// "<tool>: error: <what>" once and exits with 2, before any work where it can.
#pragma once

#include <stdexcept>

namespace mpsb {

class UsageError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

}  // namespace mpsb
