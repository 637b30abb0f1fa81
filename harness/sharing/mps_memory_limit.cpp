#include "sharing/mps_memory_limit.hpp"

#include <cctype>
#include <cstdio>
#include <limits>

#include "runtime/usage_error.hpp"
#include "sharing/device.hpp"

namespace mpsb {
namespace {

std::string trim(const std::string& text) {
  const auto first = text.find_first_not_of(" \t");
  if (first == std::string::npos) return "";
  const auto last = text.find_last_not_of(" \t");
  return text.substr(first, last - first + 1);
}

bool all_digits(const std::string& text) {
  if (text.empty()) return false;
  for (char c : text) {
    if (!std::isdigit(static_cast<unsigned char>(c))) return false;
  }
  return true;
}

[[noreturn]] void malformed(const std::string& text, const std::string& item, const std::string& why) {
  throw UsageError(std::string(kPinnedMemLimitVariable) + "='" + text + "': '" + item + "' " + why +
                   " (expected DEVICE=VALUE[,DEVICE=VALUE...], DEVICE a CUDA device index or GPU-/MIG- UUID, "
                   "VALUE bytes with an optional K, M, G or T, e.g. 0=1G,1=512M)");
}

// "1G", "512MB", "1GiB", "4096": bytes; nullopt when malformed or out of range.
std::optional<std::uint64_t> parse_value(const std::string& value) {
  std::size_t digits = 0;
  while (digits < value.size() && std::isdigit(static_cast<unsigned char>(value[digits]))) ++digits;
  if (digits == 0 || digits > 19) return std::nullopt;
  std::uint64_t number = 0;
  for (std::size_t i = 0; i < digits; ++i) {
    const auto digit = static_cast<std::uint64_t>(value[i] - '0');
    if (number > (std::numeric_limits<std::uint64_t>::max() - digit) / 10) return std::nullopt;
    number = number * 10 + digit;
  }
  std::string unit = value.substr(digits);
  for (auto& c : unit) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  std::uint64_t scale = 1;
  if (!unit.empty() && unit != "B") {
    const char prefix = unit.front();
    const std::string rest = unit.substr(1);
    if (rest != "" && rest != "B" && rest != "IB") return std::nullopt;
    switch (prefix) {
      case 'K': scale = std::uint64_t{1} << 10; break;
      case 'M': scale = std::uint64_t{1} << 20; break;
      case 'G': scale = std::uint64_t{1} << 30; break;
      case 'T': scale = std::uint64_t{1} << 40; break;
      default: return std::nullopt;
    }
  }
  if (number > std::numeric_limits<std::uint64_t>::max() / scale) return std::nullopt;
  return number * scale;
}

}  // namespace

std::vector<PinnedMemLimit> parse_pinned_mem_limits(const std::string& text) {
  std::vector<PinnedMemLimit> limits;
  if (trim(text).empty()) malformed(text, text, "is empty");
  std::size_t start = 0;
  for (;;) {
    const auto comma = text.find(',', start);
    const std::string item = trim(text.substr(start, comma == std::string::npos ? std::string::npos : comma - start));
    const auto eq = item.find('=');
    if (item.empty()) malformed(text, item, "is an empty item");
    if (eq == std::string::npos) malformed(text, item, "has no '='");
    PinnedMemLimit limit;
    limit.device = trim(item.substr(0, eq));
    const std::string value = trim(item.substr(eq + 1));
    const bool uuid = (limit.device.rfind("GPU-", 0) == 0 || limit.device.rfind("MIG-", 0) == 0) &&
                      limit.device.size() > 4;
    if (!all_digits(limit.device) && !uuid) {
      malformed(text, item, "names no device (a CUDA device index or a GPU-/MIG- UUID)");
    }
    const auto bytes = parse_value(value);
    if (!bytes) malformed(text, item, "has no valid size");
    if (*bytes == 0) malformed(text, item, "sets a zero limit");
    limit.bytes = *bytes;
    limits.push_back(limit);
    if (comma == std::string::npos) break;
    start = comma + 1;
  }
  return limits;
}

std::optional<std::uint64_t> pinned_mem_limit_for(const std::vector<PinnedMemLimit>& limits, int index,
                                                  const std::string& uuid) {
  for (const auto& l : limits) {
    if (all_digits(l.device)) {
      if (l.device.size() <= 9 && std::stoi(l.device) == index) return l.bytes;
    } else if (uuid_selector_matches(l.device, uuid)) {
      return l.bytes;
    }
  }
  return std::nullopt;
}

std::optional<std::uint64_t> applicable_pinned_mem_limit(const std::optional<std::string>& text, bool mps_client,
                                                         int index, const std::string& uuid) {
  if (!text) return std::nullopt;
  const auto limits = parse_pinned_mem_limits(*text);  // malformed: an error even without MPS
  if (!mps_client) return std::nullopt;
  return pinned_mem_limit_for(limits, index, uuid);
}

std::string format_gib(std::uint64_t bytes) {
  char text[64];
  std::snprintf(text, sizeof text, "%.2f GiB", static_cast<double>(bytes) / (1024.0 * 1024 * 1024));
  return text;
}

void verify_pinned_mem_limits(const std::vector<RankMemoryLimit>& ranks) {
  for (const auto& r : ranks) {
    if (!r.limit_bytes) continue;
    const std::uint64_t limit = *r.limit_bytes;
    if (r.memory_free_bytes <= limit + limit / 100) continue;
    throw UsageError("rank " + std::to_string(r.rank) + " on " + r.host + ": " + kPinnedMemLimitVariable +
                     " limits GPU " + std::to_string(r.gpu_index) + " to " + format_gib(limit) +
                     ", but its MPS client sees " + format_gib(r.memory_free_bytes) +
                     " free (cudaMemGetInfo): the limit is not in force, so the run would not measure what "
                     "it asks for");
  }
}

}  // namespace mpsb
