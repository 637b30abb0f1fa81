// The CPU device's host-memory preflight (issue 25): MemAvailable parsed from
// /proc/meminfo, what a configuration needs per host, and the refusal.
#include <gtest/gtest.h>

#include "measure/host_memory.hpp"

namespace mpsb {
namespace {

TEST(HostMemory, MemAvailableInBytes) {
  EXPECT_EQ(mem_available_bytes("MemTotal:  2097152 kB\nMemAvailable:    1048576 kB\n"),
            std::optional<std::uint64_t>(1048576ull * 1024));
  EXPECT_FALSE(mem_available_bytes("MemTotal: 2097152 kB\n").has_value());
  EXPECT_FALSE(mem_available_bytes("MemAvailable: lots\n").has_value());
  EXPECT_FALSE(mem_available_bytes("MemAvailable: 12 MB\n").has_value());
}

TEST(HostMemory, AConfigurationNeedsItsInstancesTogether) {
  const Config one{"matmul", "fp32", 10000, 1, {}, {}};
  const Config four{"matmul", "fp32", 10000, 4, {}, {}};
  EXPECT_DOUBLE_EQ(host_bytes_per_host(four), 4 * host_bytes_per_host(one));
  EXPECT_GT(host_bytes_per_instance(one), 3.0 * 10000 * 10000 * 4);  // at least the three matrices
  const Config mix{"mix", "matmul/fp32/10000:2,matmul/fp32/10000:1", 0, 3,
                   {}, {Tenant{"matmul", "fp32", 10000, 2, {}}, Tenant{"matmul", "fp32", 10000, 1, {}}}};
  EXPECT_DOUBLE_EQ(host_bytes_per_host(mix), 3 * host_bytes_per_host(one));
}

TEST(HostMemory, TheFirstConfigurationThatCannotFitIsNamed) {
  const std::vector<Config> plan{{"matmul", "fp32", 64, 1, {}, {}}, {"matmul", "fp32", 64, 2, {}, {}},
                                 {"matmul", "fp32", 20000, 1, {}, {}}};
  const std::uint64_t gib = 1ull << 30;
  EXPECT_EQ(host_memory_refusal(plan, "node1", 64 * gib), "");
  const std::string refusal = host_memory_refusal(plan, "node1", gib);
  EXPECT_EQ(refusal.find("--device cpu: matmul fp32 size 20000 with 1 instance(s) per host needs about "), 0u)
      << refusal;
  EXPECT_NE(refusal.find("but host node1 has 1.00 GiB available (MemAvailable)"), std::string::npos) << refusal;
  EXPECT_EQ(refusal.find('\n'), std::string::npos);
}

}  // namespace
}  // namespace mpsb
