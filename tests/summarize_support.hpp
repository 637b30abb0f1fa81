// Synthetic samples for the summarize() tests (test_summarize.cpp, test_summarize_mix.cpp): placements,
// settings, one instance's repetitions, and work records, built by hand so the expected figures can be
// computed on paper.
#pragma once

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <string>
#include <utility>
#include <vector>

#include "measure/host_allreduce.hpp"
#include "registry.hpp"
#include "results/result.hpp"
#include "results/result_json.hpp"

namespace mpsb {
namespace summarize_test {

constexpr double kTolerance = 1e-12;  // relative, for values built from a few divisions

#define EXPECT_REL(actual, expected)                                                  \
  EXPECT_NEAR((actual), (expected), kTolerance * std::max(1.0, std::fabs(expected))) \
      << #actual " vs " #expected

inline Placement cpu_ranks(int n) {
  std::vector<RankPlacement> ranks;
  for (int r = 0; r < n; ++r) ranks.push_back(describe_rank(r, "h", r, DeviceKind::cpu, GpuInfo{}));
  return build_placement(DeviceKind::cpu, ranks);
}

inline MeasureSettings three_repetitions() {
  MeasureSettings s;
  s.repetitions = 3;
  return s;
}

inline Config plain(const std::string& kernel, const std::string& precision, std::int64_t size, int ranks,
             KernelParams params = {}) {
  return Config{kernel, precision, size, ranks, std::move(params), {}};
}

// One instance's samples of three repetitions.
inline RankSamples instance(int rank, const Config& config, std::int64_t iterations, std::vector<double> start,
                     std::vector<double> end, Work work, int tenant = 0) {
  RankSamples s;
  s.rank = rank;
  s.tenant = tenant;
  s.config = config;
  s.iterations = iterations;
  s.start_s = std::move(start);
  s.end_s = std::move(end);
  s.work = std::move(work);
  s.verification = Verification{true, 1e-7, 1e-5, 16, ""};
  s.warmup = WarmupOutcome{0.3, 4, true};
  s.affected = std::vector<bool>(s.start_s.size(), false);
  return s;
}

inline Work flops(double per_iteration) { return Work{per_iteration, 0, 0, ""}; }
inline Work requests(double flop) { return Work{flop, 1000, 1, "request"}; }

inline nlohmann::json json_of(const Result& r) { return nlohmann::json::parse(to_json(r).dump()); }

// Two matmul ranks, 10 iterations per repetition, with the collective's seconds per repetition.
inline ConfigSamples allreduce_samples() {
  ConfigSamples s;
  s.config = plain("matmul", "fp32", 64, 2);
  s.iterations = 10;
  s.ranks.push_back(instance(0, s.config, 10, {0, 1, 2}, {0.5, 1.4, 2.6}, flops(1e6)));
  s.ranks.push_back(instance(1, s.config, 10, {0, 1, 2}, {0.5, 1.4, 2.6}, flops(1e6)));
  s.ranks[0].collective_s = {0.01, 0.02, 0.03};
  s.ranks[1].collective_s = {0.04, 0.05, 0.06};
  for (auto& r : s.ranks) r.collective_checked = 8192 * 40;  // 64 KiB of doubles, 40 calls
  return s;
}

}  // namespace summarize_test
}  // namespace mpsb
