#include <gtest/gtest.h>

#include "cli/options.hpp"
#include "measure/placement.hpp"
#include "measure/plan.hpp"
#include "measure/preflight.hpp"
#include "registry.hpp"
#include "runtime/usage_error.hpp"

namespace mpsb {
namespace {

TEST(Plan, DefaultRankCountsArePowersOfTwoPlusMaximum) {
  EXPECT_EQ(default_rank_counts(1), (std::vector<int>{1}));
  EXPECT_EQ(default_rank_counts(2), (std::vector<int>{1, 2}));
  EXPECT_EQ(default_rank_counts(6), (std::vector<int>{1, 2, 4, 6}));
  EXPECT_EQ(default_rank_counts(8), (std::vector<int>{1, 2, 4, 8}));
}

TEST(Plan, SweepOrderIsKernelPrecisionSizeRanks) {
  PlanRequest o;
  o.kernels = {"matmul"};
  o.precisions = {"fp32", "bf16"};
  o.sizes = {64, 128};
  const auto plan = build_plan(o, SharingMode::automatic, DeviceKind::gpu, 4, 1);
  ASSERT_EQ(plan.size(), 2u * 2u * 3u);
  EXPECT_EQ(plan[0].precision, "fp32");
  EXPECT_EQ(plan[0].size, 64);
  EXPECT_EQ(plan[0].ranks_per_gpu, 1);
  EXPECT_EQ(plan[2].ranks_per_gpu, 4);
  EXPECT_EQ(plan[3].size, 128);
  EXPECT_EQ(plan[6].precision, "bf16");
}

TEST(Plan, ARepeatedSizeOrPrecisionIsMeasuredOnce) {
  const Options o = parse_options({"--kernel", "matmul,matmul", "--precision", "fp32,fp32", "--size", "32,32",
                                   "--ranks-per-gpu", "1,1"});
  const auto plan = build_plan(o.plan, o.mode, DeviceKind::gpu, 1, 1);
  ASSERT_EQ(plan.size(), 1u);
  EXPECT_EQ(plan[0].size, 32);
}

TEST(Plan, DefaultsComeFromTheKernelForTheDevice) {
  PlanRequest o;
  o.kernels = {"matmul"};
  const KernelInfo& k = *find_kernel("matmul");
  const auto gpu = build_plan(o, SharingMode::automatic, DeviceKind::gpu, 1, 1);
  EXPECT_EQ(gpu.size(), k.default_precisions.size() * k.default_gpu_sizes.size());
  EXPECT_EQ(gpu.front().size, k.default_gpu_sizes.front());
  const auto cpu = build_plan(o, SharingMode::automatic, DeviceKind::cpu, 1, 1);
  EXPECT_EQ(cpu.front().size, k.default_cpu_sizes.front());
}

TEST(Plan, ExplicitRankCountsAreSortedAndDeduplicated) {
  PlanRequest o;
  o.kernels = {"matmul"};
  o.precisions = {"fp32"};
  o.sizes = {64};
  o.ranks_per_gpu = {4, 1, 4};
  const auto plan = build_plan(o, SharingMode::automatic, DeviceKind::gpu, 8, 1);
  ASSERT_EQ(plan.size(), 2u);
  EXPECT_EQ(plan[0].ranks_per_gpu, 1);
  EXPECT_EQ(plan[1].ranks_per_gpu, 4);
}

TEST(Plan, MoreRanksThanExistIsAUsageError) {
  PlanRequest o;
  o.ranks_per_gpu = {16};
  try {
    build_plan(o, SharingMode::automatic, DeviceKind::gpu, 8, 1);
    FAIL() << "expected UsageError";
  } catch (const UsageError& e) {
    EXPECT_NE(std::string(e.what()).find("16 active ranks per GPU requested, but only 8 exist"),
              std::string::npos)
        << e.what();
  }
}

RankPlacement rank_on(int rank, const std::string& host, const std::string& uuid, std::uint64_t free_bytes) {
  GpuInfo gpu;
  gpu.index = 0;
  gpu.uuid = uuid;
  gpu.memory_free_bytes = free_bytes;
  return describe_rank(rank, host, rank, DeviceKind::gpu, gpu);
}

TEST(Placement, SlotsFollowWorldRankWithinEachDevice) {
  const Placement p = build_placement(DeviceKind::gpu, {rank_on(2, "a", "GPU-1", 0), rank_on(0, "a", "GPU-0", 0),
                                                        rank_on(1, "a", "GPU-1", 0), rank_on(3, "a", "GPU-0", 0)});
  EXPECT_EQ(p.device_count, 2);
  EXPECT_EQ(p.max_ranks_per_device, 2);
  EXPECT_FALSE(p.uneven);
  EXPECT_EQ(p.ranks[0].slot, 0);
  EXPECT_EQ(p.ranks[3].slot, 1);
  EXPECT_EQ(p.ranks[1].slot, 0);
  EXPECT_EQ(p.ranks[2].slot, 1);
  EXPECT_TRUE(p.is_active(1, 1));
  EXPECT_FALSE(p.is_active(2, 1));
  EXPECT_EQ(p.active_count(1), 2);
  EXPECT_EQ(p.distinct_gpus().size(), 2u);
}

TEST(Placement, UnevenDevicesSweepToTheFewest) {
  const Placement p = build_placement(
      DeviceKind::gpu, {rank_on(0, "a", "GPU-0", 0), rank_on(1, "a", "GPU-1", 0), rank_on(2, "a", "GPU-0", 0)});
  EXPECT_EQ(p.max_ranks_per_device, 1);
  EXPECT_TRUE(p.uneven);
}

TEST(Placement, SerializationRoundTrips) {
  RankPlacement r = rank_on(5, "node7", "GPU-abc", 123456789);
  r.gpu.name = "NVIDIA H100";
  r.gpu.mps_enabled = true;
  r.gpu.sm_count = 32;
  const RankPlacement back = deserialize_rank(serialize(r));
  EXPECT_EQ(back.rank, 5);
  EXPECT_EQ(back.host, "node7");
  EXPECT_EQ(back.gpu.uuid, "GPU-abc");
  EXPECT_EQ(back.gpu.memory_free_bytes, 123456789u);
  EXPECT_TRUE(back.gpu.mps_enabled);
  EXPECT_EQ(back.gpu.sm_count, 32);
}

TEST(Preflight, RejectsSizesOneRankCannotHoldAndFlagsRankCountsThatMayNotFit) {
  const double gib = 1024.0 * 1024 * 1024;
  const Placement p = build_placement(DeviceKind::gpu, {rank_on(0, "a", "GPU-0", static_cast<std::uint64_t>(10 * gib)),
                                                        rank_on(1, "a", "GPU-0", static_cast<std::uint64_t>(10 * gib))});
  // 3 * 16384^2 * 4 bytes = 3 GiB per rank: one and two ranks fit.
  EXPECT_TRUE(preflight_memory({Config{"matmul", "fp32", 16384, 1, {}, {}}, Config{"matmul", "fp32", 16384, 2, {}, {}}}, p).empty());
  // 3 * 30000^2 * 4 bytes + workspace = 10.12 GiB: not even one rank fits: bad input.
  try {
    preflight_memory({Config{"matmul", "fp32", 16384, 1, {}, {}}, Config{"matmul", "fp32", 30000, 1, {}, {}}}, p);
    FAIL() << "expected UsageError";
  } catch (const UsageError& e) {
    const std::string m = e.what();
    EXPECT_NE(m.find("matmul fp32 size 30000 needs 10.12 GiB per rank"), std::string::npos) << m;
    EXPECT_NE(m.find("10.00 GiB free"), std::string::npos) << m;
  }
  // 3 * 25000^2 * 4 bytes + workspace = 7.05 GiB: one rank fits, two may not: it runs, flagged.
  const auto tight =
      preflight_memory({Config{"matmul", "fp32", 25000, 1, {}, {}}, Config{"matmul", "fp32", 25000, 2, {}, {}}}, p);
  ASSERT_EQ(tight.size(), 1u);
  EXPECT_NE(tight[0].find("size 25000 with 2 ranks per GPU needs 2 x 7.05 GiB = 14.09 GiB"), std::string::npos)
      << tight[0];
  EXPECT_NE(tight[0].find("recorded as failed"), std::string::npos) << tight[0];
}

TEST(Preflight, EveryGpuIsCheckedNotOnlyTheFirstShortOne) {
  const double gib = 1024.0 * 1024 * 1024;
  // GPU-0 can hold one 7.05 GiB rank but not two; GPU-1 (busy with something
  // else) cannot hold even one. Without a one-rank configuration in the plan,
  // GPU-1 must still make the size bad input.
  const Placement p = build_placement(DeviceKind::gpu, {rank_on(0, "a", "GPU-0", static_cast<std::uint64_t>(10 * gib)),
                                                        rank_on(1, "a", "GPU-1", static_cast<std::uint64_t>(5 * gib))});
  try {
    preflight_memory({Config{"matmul", "fp32", 25000, 2, {}, {}}}, p);
    FAIL() << "expected UsageError";
  } catch (const UsageError& e) {
    const std::string m = e.what();
    EXPECT_NE(m.find("matmul fp32 size 25000 needs 7.05 GiB per rank"), std::string::npos) << m;
    EXPECT_NE(m.find("5.00 GiB free"), std::string::npos) << m;
  }
}

TEST(Preflight, UnderAnMpsPinnedMemoryLimitASizeOverItRunsAndFailsAsOneConfiguration) {
  const double gib = 1024.0 * 1024 * 1024;
  // An MPS client limited to 2 GiB sees about that much free memory.
  RankPlacement limited = rank_on(0, "a", "GPU-0", static_cast<std::uint64_t>(1.5 * gib));
  limited.gpu.mps_pinned_mem_limit_bytes = static_cast<std::uint64_t>(2 * gib);
  const Placement p = build_placement(DeviceKind::gpu, {limited});
  std::vector<std::string> notes;
  ASSERT_NO_THROW(notes = preflight_memory({Config{"matmul", "fp32", 4096, 1, {}, {}},
                                            Config{"matmul", "fp32", 16384, 1, {}, {}}}, p));
  ASSERT_EQ(notes.size(), 1u);
  EXPECT_NE(notes[0].find("matmul fp32 size 16384 needs 3.06 GiB per rank, over the MPS pinned device memory limit "
                          "of 2.00 GiB"), std::string::npos) << notes[0];
  EXPECT_NE(notes[0].find("recorded as failed"), std::string::npos) << notes[0];
}

TEST(Preflight, CpuDeviceHasNoGpuMemoryLimit) {
  const Placement p = build_placement(DeviceKind::cpu, {describe_rank(0, "a", 0, DeviceKind::cpu, GpuInfo{})});
  EXPECT_NO_THROW(preflight_memory({Config{"matmul", "fp32", 40000, 1, {}, {}}}, p));
}

}  // namespace
}  // namespace mpsb
