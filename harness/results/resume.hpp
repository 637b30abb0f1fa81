// --resume: what a killed run left in its results file is kept, and only the
// configurations missing from it run again. A file is resumable only when it
// describes the same sweep (configuration list, device kind, requested mode
// and world size) in a schema version this mpsbench continues (2 or 3: a
// version 2 record gets its kind); otherwise mixing its numbers with new ones
// would silently produce a file no single run could have written.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <tuple>
#include <vector>

#include <nlohmann/json.hpp>

#include "measure/plan.hpp"
#include "results/result.hpp"

namespace mpsb {

// What must match between the file and this run.
struct RunIdentity {
  std::vector<Config> plan;
  std::string device;  // "gpu" or "cpu": the device used
  std::string mode;    // --mode as requested
  int world_size = 0;
};

// Parses the file; throws UsageError ("--resume: ...") when it cannot be read
// or is not JSON.
nlohmann::ordered_json read_results_file(const std::string& path);

// The finished results (status ok or failed) of `doc`, by index into
// current.plan; a configuration listed twice keeps its first record. Throws
// UsageError naming the first mismatch when `doc` is not a resumable
// mpsbench-results document for `current`.
std::vector<std::optional<nlohmann::ordered_json>> resumable_results(const nlohmann::ordered_json& doc,
                                                                     const RunIdentity& current);

// The aggregate median of each resumed ok one-rank result, by (kernel,
// precision, size): the speedup baseline of the configurations still to run.
std::map<std::tuple<std::string, std::string, std::int64_t>, double> one_rank_baselines(
    const std::vector<std::optional<nlohmann::ordered_json>>& slots);

// Every resumed ok configuration that is not a mix, as a tenant alone on its
// GPU: the slowdown baseline of the mixes still to run.
TenantBaselines tenant_baselines(const std::vector<std::optional<nlohmann::ordered_json>>& slots);

}  // namespace mpsb
