#include "cli/option_values.hpp"

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cmath>
#include <cstdlib>

#include "runtime/values.hpp"

namespace mpsb {
namespace {

// A whole finite decimal number, or a UsageError naming `typed` (what the
// user wrote, `text` less a unit sign) as not `what`.
double parse_real(const std::string& flag, const std::string& text, const char* what,
                  const std::string& typed) {
  errno = 0;
  char* end = nullptr;
  const double value = std::strtod(text.c_str(), &end);
  if (text.empty() || end != text.c_str() + text.size() || errno == ERANGE || !std::isfinite(value) ||
      std::isspace(static_cast<unsigned char>(text.front()))) {
    throw UsageError(flag + ": '" + typed + "' is not " + what);
  }
  return value;
}

double parse_real(const std::string& flag, const std::string& text, const char* what) {
  return parse_real(flag, text, what, text);
}

bool all_digits(const std::string& text) {
  return std::all_of(text.begin(), text.end(), [](char c) { return std::isdigit(static_cast<unsigned char>(c)); });
}

// One --gpus item.
std::string parse_gpu_item(const std::string& flag, const std::string& item) {
  if (item.rfind("MIG-GPU-", 0) == 0) {
    throw UsageError(flag + ": '" + item + "' is the old MIG-GPU-<uuid>/<gi>/<ci> form; give the MIG-<uuid> that "
                     "nvidia-smi -L prints");
  }
  if (item.rfind("GPU-", 0) == 0 || item.rfind("MIG-", 0) == 0) {
    const std::string hex = item.substr(4);
    const bool valid = !hex.empty() && std::all_of(hex.begin(), hex.end(), [](char c) {
      return std::isxdigit(static_cast<unsigned char>(c)) || c == '-';
    });
    if (!valid) throw UsageError(flag + ": '" + item + "' is not a GPU-/MIG- UUID (hex digits and dashes after the prefix)");
    return item;
  }
  if (item.empty() || !all_digits(item)) {
    throw UsageError(flag + ": '" + item + "' is neither a CUDA device index nor a GPU-/MIG- UUID");
  }
  return std::to_string(parse_integer(flag, item, 0, 1023));
}

}  // namespace

double parse_seconds(const std::string& flag, const std::string& text) {
  const double value = parse_real(flag, text, "a number of seconds");
  if (value <= 0 || value > 3600) throw UsageError(flag + ": " + text + " must be in (0, 3600] seconds");
  return value;
}

double parse_timeout(const std::string& flag, const std::string& text) {
  const double value = parse_real(flag, text, "a number of seconds");
  if (value < 0 || value > 1e6) throw UsageError(flag + ": " + text + " must be in [0, 1e6] seconds (0: none)");
  return value;
}

double parse_warmup(const std::string& flag, const std::string& text) {
  const double value = parse_real(flag, text, "a number of seconds");
  if (value < 0 || value > 60) throw UsageError(flag + ": " + text + " must be in [0, 60] seconds");
  return value;
}

double parse_energy_span(const std::string& flag, const std::string& text) {
  const double value = parse_real(flag, text, "a number of seconds");
  if (value < 0 || value > 60) throw UsageError(flag + ": " + text + " must be in [0, 60] seconds");
  return value;
}

namespace {

// "30" or "30%": the number of percent.
double percent_number(const std::string& flag, const std::string& text) {
  const std::string number = !text.empty() && text.back() == '%' ? text.substr(0, text.size() - 1) : text;
  return parse_real(flag, number, "a percentage", text);
}

}  // namespace

double parse_percent(const std::string& flag, const std::string& text, bool allow_100) {
  const double value = percent_number(flag, text);
  if (value <= 0 || value > 100 || (!allow_100 && value == 100)) {
    throw UsageError(flag + ": " + text + " must be in (0, 100" + (allow_100 ? "]" : ")") + " percent");
  }
  return value / 100.0;
}

double parse_slowdown_percent(const std::string& flag, const std::string& text) {
  const double value = percent_number(flag, text);
  if (value <= 0 || value > 1000) throw UsageError(flag + ": " + text + " must be in (0, 1000] percent");
  return value / 100.0;
}

std::int64_t parse_allreduce_bytes(const std::string& flag, const std::string& text) {
  std::string digits = text;
  std::int64_t scale = 1;
  if (!digits.empty()) {
    const char unit = static_cast<char>(std::toupper(static_cast<unsigned char>(digits.back())));
    if (unit == 'K' || unit == 'M' || unit == 'G') {
      scale = unit == 'K' ? 1024 : unit == 'M' ? 1024 * 1024 : 1024 * 1024 * 1024;
      digits.pop_back();
    }
  }
  if (digits.empty() || !all_digits(digits)) {
    throw UsageError(flag + ": '" + text + "' is not a byte count (e.g. 8, 64K, 4M)");
  }
  const std::int64_t count = parse_integer(flag, digits, 1, std::int64_t{1} << 30);
  const std::int64_t bytes = count * scale;
  if (bytes > (std::int64_t{1} << 30) || bytes % 8 != 0) {
    throw UsageError(flag + ": " + text + " must be a multiple of 8 bytes (doubles), at most 1G");
  }
  return bytes;
}

std::vector<std::string> parse_gpu_list(const std::string& flag, const std::string& text) {
  std::vector<std::string> gpus;
  for (const auto& item : split_list(flag, text)) {
    const std::string gpu = parse_gpu_item(flag, item);
    if (std::find(gpus.begin(), gpus.end(), gpu) != gpus.end()) {
      throw UsageError(flag + ": GPU " + item + " listed twice");
    }
    gpus.push_back(gpu);
  }
  return gpus;
}

const KernelInfo* known_kernel(const std::string& flag, const std::string& name) {
  const KernelInfo* info = find_kernel(name);
  if (info == nullptr) {
    std::string known;
    for (const auto& k : kernel_registry()) known += (known.empty() ? "" : ", ") + k.name;
    throw UsageError(flag + ": unknown kernel '" + name + "' (known: " + known + ")");
  }
  return info;
}

void check_size_limits(const std::string& kernel, const std::vector<std::int64_t>& sizes) {
  const KernelInfo* info = known_kernel("--size", kernel);
  for (auto size : sizes) {
    if (size > info->max_size) {
      throw UsageError("--size: " + std::to_string(size) + " exceeds the largest " + kernel + " size " +
                       std::to_string(info->max_size));
    }
  }
}

void parse_param(const std::string& flag, const std::string& text,
                 std::map<std::string, std::map<std::string, std::int64_t>>& params) {
  const auto dot = text.find('.');
  const auto eq = text.find('=');
  if (dot == std::string::npos || eq == std::string::npos || dot > eq || dot == 0 || eq == dot + 1) {
    throw UsageError(flag + ": '" + text + "' is not KERNEL.NAME=VALUE");
  }
  const std::string kernel = text.substr(0, dot), name = text.substr(dot + 1, eq - dot - 1);
  const KernelInfo* info = known_kernel(flag, kernel);
  for (const auto& p : info->params) {
    if (p.name != name) continue;
    params[kernel][name] = parse_integer(flag + " " + kernel + "." + name, text.substr(eq + 1), p.min, p.max);
    return;
  }
  std::string known;
  for (const auto& p : info->params) known += (known.empty() ? "" : ", ") + p.name;
  throw UsageError(flag + ": kernel " + kernel + " has no parameter '" + name + "' (" +
                   (known.empty() ? std::string("it has none") : "known: " + known) + ")");
}

std::vector<Tenant> parse_mix(const std::string& flag, const std::string& text) {
  std::vector<Tenant> tenants;
  for (const auto& item : split_list(flag, text)) {
    const auto colon = item.rfind(':');
    if (colon == std::string::npos || colon == 0) {
      throw UsageError(flag + ": '" + item + "' is not KERNEL[/PRECISION[/SIZE]]:RANKS");
    }
    Tenant t;
    t.ranks_per_gpu = static_cast<int>(parse_integer(flag + " " + item, item.substr(colon + 1), 1, 1024));
    std::vector<std::string> parts;
    std::string spec = item.substr(0, colon);
    for (std::size_t start = 0;;) {
      const auto slash = spec.find('/', start);
      parts.push_back(spec.substr(start, slash == std::string::npos ? std::string::npos : slash - start));
      if (slash == std::string::npos) break;
      start = slash + 1;
    }
    if (parts.size() > 3 || parts.front().empty()) {
      throw UsageError(flag + ": '" + item + "' is not KERNEL[/PRECISION[/SIZE]]:RANKS");
    }
    const KernelInfo* info = known_kernel(flag, parts[0]);
    t.kernel = info->name;
    if (parts.size() > 1) {
      t.precision = parts[1];
      if (std::find(info->precisions.begin(), info->precisions.end(), t.precision) == info->precisions.end()) {
        throw UsageError(flag + ": kernel " + t.kernel + " has no precision '" + t.precision + "'");
      }
    }
    if (parts.size() > 2) {
      t.size = parse_integer(flag + " " + item, parts[2], 1, info->max_size);
    }
    tenants.push_back(std::move(t));
  }
  if (tenants.size() < 2) throw UsageError(flag + ": '" + text + "' names one tenant; a mix needs at least two");
  return tenants;
}

}  // namespace mpsb
