// The message of the UsageError a call throws, or "" when it throws none:
// lets a test assert on the exact one-line rejection.
#pragma once

#include <string>

#include "runtime/usage_error.hpp"

namespace mpsb {

template <typename Call>
std::string usage_error_text(Call&& call) {
  try {
    call();
  } catch (const UsageError& e) {
    return e.what();
  }
  return "";
}

}  // namespace mpsb
