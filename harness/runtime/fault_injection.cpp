#include "runtime/fault_injection.hpp"

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <thread>

#include "runtime/check.hpp"
#include "runtime/values.hpp"

namespace mpsb {
namespace {

// Set once by init_fault_injection_from_environment() before any thread starts.
FaultSpec& active_fault() {
  static FaultSpec spec;
  return spec;
}

bool selected(FaultKind kind, int rank, int config) {
  const FaultSpec& f = active_fault();
  return f.kind == kind && f.rank == rank && f.config == config;
}

int parse_field(const std::string& text, const std::string& item, const std::string& key) {
  const std::string prefix = key + "=";
  if (item.rfind(prefix, 0) != 0) {
    throw UsageError("MPSBENCH_FAULT: expected '" + key + "=N' in '" + text + "', got '" + item + "'");
  }
  const std::int64_t min = key == "config" ? 1 : 0;
  return static_cast<int>(parse_integer("MPSBENCH_FAULT " + key, item.substr(prefix.size()), min, 1 << 30));
}

}  // namespace

FaultSpec parse_fault_spec(const std::string& text) {
  std::vector<std::string> items;
  std::size_t begin = 0;
  while (true) {
    const auto colon = text.find(':', begin);
    items.push_back(text.substr(begin, colon == std::string::npos ? std::string::npos : colon - begin));
    if (colon == std::string::npos) break;
    begin = colon + 1;
  }
  const std::string usage = " (expected abort|oom|hang|throttle|cpu_slow:rank=R:config=K)";
  if (items.size() != 3) throw UsageError("MPSBENCH_FAULT: malformed '" + text + "'" + usage);
  FaultSpec spec;
  if (items[0] == "abort") spec.kind = FaultKind::abort;
  else if (items[0] == "oom") spec.kind = FaultKind::oom;
  else if (items[0] == "hang") spec.kind = FaultKind::hang;
  else if (items[0] == "throttle") spec.kind = FaultKind::throttle;
  else if (items[0] == "cpu_slow") spec.kind = FaultKind::cpu_slow;
  else throw UsageError("MPSBENCH_FAULT: unknown fault '" + items[0] + "'" + usage);
  spec.rank = parse_field(text, items[1], "rank");
  spec.config = parse_field(text, items[2], "config");
  return spec;
}

void init_fault_injection_from_environment() {
  const char* value = std::getenv("MPSBENCH_FAULT");
  active_fault() = value == nullptr ? FaultSpec{} : parse_fault_spec(value);
}

void inject_after_setup(int rank, int config) {
  if (selected(FaultKind::abort, rank, config)) {
    // Announce first: abort() leaves only the launcher's note about a signal.
    std::fprintf(stderr, "mpsbench: fault injection: %s aborts in configuration %d\n", error_identity().c_str(),
                 config);
    std::fflush(stderr);
    std::abort();
  }
  if (selected(FaultKind::oom, rank, config)) {
    // The very text check_cuda would produce for a failed cudaMalloc.
    throw OutOfMemoryError(error_identity() + ": cudaMalloc failed: out of memory [cudaErrorMemoryAllocation]" +
                           pinned_memory_limit_note() + " (injected by MPSBENCH_FAULT)");
  }
}

bool inject_throttle(int rank, int config) { return selected(FaultKind::throttle, rank, config); }

bool inject_cpu_slow(int rank, int config) { return selected(FaultKind::cpu_slow, rank, config); }

void inject_in_timed_loop(int rank, int config) {
  if (!selected(FaultKind::hang, rank, config)) return;
  for (;;) std::this_thread::sleep_for(std::chrono::hours(1));
}

}  // namespace mpsb
