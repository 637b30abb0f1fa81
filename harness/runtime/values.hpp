// Parsing of values from the command line and the environment, shared by
// mpsbench, mpsbench-micro and bare-gemm, so every tool rejects bad input with
// the same one-line messages.
#pragma once

#include <algorithm>
#include <cstdint>
#include <string>
#include <vector>

#include "runtime/usage_error.hpp"

namespace mpsb {

// "a,b,c" -> {"a", "b", "c"}; an empty item is an error naming `flag`.
std::vector<std::string> split_list(const std::string& flag, const std::string& value);
// A whole decimal integer in [min_value, max_value].
std::int64_t parse_integer(const std::string& flag, const std::string& text, std::int64_t min_value,
                           std::int64_t max_value);
// `items` without repeats, first occurrences kept in order: "--size 32,32"
// asks for one configuration, not the same one measured twice.
template <typename T>
std::vector<T> unique_in_order(const std::vector<T>& items) {
  std::vector<T> out;
  for (const auto& item : items) {
    if (std::find(out.begin(), out.end(), item) == out.end()) out.push_back(item);
  }
  return out;
}

// A list of positive problem sizes, repeats dropped.
std::vector<std::int64_t> parse_sizes(const std::string& flag, const std::string& list);

}  // namespace mpsb
