#include "runtime/values.hpp"

#include <cerrno>
#include <climits>
#include <cstdlib>
#include <sstream>

namespace mpsb {

std::vector<std::string> split_list(const std::string& flag, const std::string& value) {
  std::vector<std::string> items;
  std::string item;
  std::istringstream in(value);
  while (std::getline(in, item, ',')) {
    if (item.empty()) throw UsageError(flag + ": empty item in list '" + value + "'");
    items.push_back(item);
  }
  if (items.empty() || value.back() == ',') throw UsageError(flag + ": empty item in list '" + value + "'");
  return items;
}

std::int64_t parse_integer(const std::string& flag, const std::string& text, std::int64_t min_value,
                           std::int64_t max_value) {
  errno = 0;
  char* end = nullptr;
  const long long value = std::strtoll(text.c_str(), &end, 10);
  if (text.empty() || end != text.c_str() + text.size() || errno == ERANGE || text.front() == ' ') {
    throw UsageError(flag + ": '" + text + "' is not an integer");
  }
  if (value < min_value || value > max_value) {
    throw UsageError(flag + ": " + text + " is out of range [" + std::to_string(min_value) + ", " +
                     std::to_string(max_value) + "]");
  }
  return value;
}

std::vector<std::int64_t> parse_sizes(const std::string& flag, const std::string& list) {
  std::vector<std::int64_t> sizes;
  for (const auto& item : split_list(flag, list)) {
    const std::int64_t size = parse_integer(flag, item, LLONG_MIN, LLONG_MAX);
    if (size <= 0) throw UsageError(flag + ": size " + item + " must be positive");
    sizes.push_back(size);
  }
  return unique_in_order(sizes);
}

}  // namespace mpsb
