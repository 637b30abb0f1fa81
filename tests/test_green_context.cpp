// --mode green (harness/sharing/green_context.hpp): the partition sizes, the mode's
// parsing, plan limits and refusals without a GPU; on a GPU (skipped where
// none is usable) k = 1, 2 and 4 green contexts, each holding the SMs it was
// meant to, its stream inside it, its kernels on its own SMs only, and every
// registered kernel verifying in one.
#include <gtest/gtest.h>

#include <algorithm>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include <cuda_runtime_api.h>

#include "cli/options.hpp"
#include "green_sm_ids.hpp"
#include "measure/plan.hpp"
#include "gpu_test.hpp"
#include "registry.hpp"
#include "runtime/check.hpp"
#include "sharing/green_context.hpp"
#include "sharing/sharing_state.hpp"
#include "usage_error_text.hpp"

namespace mpsb {
namespace {

// What the driver documentation gives for cuDevSmResourceSplitByCount.
constexpr SmGranularity kHopper{8, 8};  // compute capability 9.0+: at least 8, multiples of 8
constexpr SmGranularity kAmpere{4, 2};  // 8.x: at least 4, multiples of 2

TEST(GreenPartitionSize, OneShareOfTheSmsRoundedDownToTheGranularity) {
  // H100 SXM: 132 SMs.
  EXPECT_EQ(green_partition_sm_count(132, 1, kHopper), 132);  // no split: the whole GPU
  EXPECT_EQ(green_partition_sm_count(132, 2, kHopper), 64);
  EXPECT_EQ(green_partition_sm_count(132, 3, kHopper), 40);
  EXPECT_EQ(green_partition_sm_count(132, 4, kHopper), 32);
  EXPECT_EQ(green_partition_sm_count(132, 8, kHopper), 16);
  EXPECT_EQ(green_partition_sm_count(132, 16, kHopper), 8);
  EXPECT_EQ(green_partition_sm_count(132, 17, kHopper), 0);  // 7 < the minimum 8
  EXPECT_EQ(green_partition_sm_count(132, 64, kHopper), 0);
  // H100 PCIe: 114 SMs.
  EXPECT_EQ(green_partition_sm_count(114, 4, kHopper), 24);
  // A100: 108 SMs.
  EXPECT_EQ(green_partition_sm_count(108, 2, kAmpere), 54);
  EXPECT_EQ(green_partition_sm_count(108, 4, kAmpere), 26);
  EXPECT_EQ(green_partition_sm_count(108, 8, kAmpere), 12);
  EXPECT_EQ(green_partition_sm_count(108, 27, kAmpere), 4);
  EXPECT_EQ(green_partition_sm_count(108, 28, kAmpere), 0);
}

TEST(GreenPartitionSize, SplitGranularityIsAtLeastTheDocumentedOne) {
  auto same = [](SmGranularity a, SmGranularity b) { return a.min_partition == b.min_partition && a.alignment == b.alignment; };
  // 132 SMs are no multiple of 8, so a Hopper may report a finer alignment than the split uses.
  EXPECT_TRUE(same(split_granularity(SmGranularity{2, 2}, 9), kHopper));
  EXPECT_TRUE(same(split_granularity(SmGranularity{8, 8}, 9), kHopper));
  EXPECT_TRUE(same(split_granularity(SmGranularity{16, 8}, 10), SmGranularity{16, 8}));  // a coarser report wins
  EXPECT_TRUE(same(split_granularity(SmGranularity{1, 1}, 8), kAmpere));
  EXPECT_TRUE(same(split_granularity(SmGranularity{1, 1}, 7), SmGranularity{2, 2}));
  EXPECT_TRUE(same(split_granularity(SmGranularity{0, 0}, 5), SmGranularity{1, 1}));
  EXPECT_EQ(green_partition_sm_count(132, 2, split_granularity(SmGranularity{2, 2}, 9)), 64);
}

TEST(GreenPartitionSize, DegenerateInputs) {
  EXPECT_EQ(green_partition_sm_count(0, 2, kHopper), 0);
  EXPECT_EQ(green_partition_sm_count(132, 0, kHopper), 0);
  EXPECT_EQ(green_partition_sm_count(132, 4, SmGranularity{0, 0}), 33);  // no granularity: plain floor
  EXPECT_EQ(green_partition_sm_count(7, 7, SmGranularity{1, 1}), 1);
}

TEST(GreenPartitionSize, SplitAttemptsStepDownToTheMinimum) {
  EXPECT_EQ(green_split_attempts(132, 4, kHopper), (std::vector<int>{32, 24, 16, 8}));
  EXPECT_EQ(green_split_attempts(132, 16, kHopper), (std::vector<int>{8}));
  EXPECT_EQ(green_split_attempts(108, 8, kAmpere), (std::vector<int>{12, 10, 8, 6, 4}));
  EXPECT_TRUE(green_split_attempts(132, 1, kHopper).empty());   // no split for one instance
  EXPECT_TRUE(green_split_attempts(132, 17, kHopper).empty());  // does not fit
  for (const int count : green_split_attempts(132, 3, kHopper)) {
    EXPECT_EQ(count % 8, 0);
    EXPECT_LE(count * 3, 132);
  }
}

TEST(GreenMode, ParsesAndRunsInstancesInOneRank) {
  EXPECT_EQ(parse_sharing_mode("green"), SharingMode::green);
  EXPECT_STREQ(to_string(SharingMode::green), "green");
  EXPECT_TRUE(runs_instances_in_one_rank(SharingMode::green));
  EXPECT_TRUE(runs_instances_in_one_rank(SharingMode::streams));
  for (const auto mode : {SharingMode::automatic, SharingMode::timeslice, SharingMode::mps, SharingMode::mps_qos}) {
    EXPECT_FALSE(runs_instances_in_one_rank(mode)) << to_string(mode);
  }
  EXPECT_NE(usage_error_text([] { parse_sharing_mode("Green"); }).find("streams or green"), std::string::npos);
  EXPECT_EQ(effective_mode(SharingMode::green, {SharingState{false, 132, std::nullopt}}), "green");
}

TEST(GreenMode, RefusesMpsClients) {
  const RankSharing client{3, "node1", SharingState{true, 132, std::nullopt}};
  const RankSharing plain{0, "node1", SharingState{false, 132, std::nullopt}};
  EXPECT_EQ(usage_error_text([&] { verify_sharing_state(SharingMode::green, {plain}); }), "");
  const std::string error = usage_error_text([&] { verify_sharing_state(SharingMode::green, {plain, client}); });
  EXPECT_NE(error.find("--mode green: rank 3 on node1 is an MPS client"), std::string::npos) << error;
}

TEST(GreenMode, PlanAllowsUpToTheStreamInstancesOnOneRank) {
  PlanRequest request;
  request.kernels = {kernel_registry().front().name};
  request.ranks_per_gpu = {1, kMaxStreamInstances};
  EXPECT_EQ(build_plan(request, SharingMode::green, DeviceKind::gpu, 1, 1).back().ranks_per_gpu, kMaxStreamInstances);
  request.ranks_per_gpu = {kMaxStreamInstances + 1};
  const std::string error = usage_error_text([&] { build_plan(request, SharingMode::green, DeviceKind::gpu, 1, 1); });
  EXPECT_NE(error.find("--ranks-per-gpu: 65 instances per GPU in --mode green; at most 64"), std::string::npos)
      << error;
}

TEST(GreenMode, OptionsRefuseTheCpuDeviceAndOneRankPerInstanceFeatures) {
  auto error_of = [](std::vector<std::string> args) { return usage_error_text([&] { parse_options(args); }); };
  EXPECT_NE(error_of({"--device", "cpu", "--mode", "green"}).find("--mode green: needs the GPU, not --device cpu"),
            std::string::npos);
  EXPECT_NE(error_of({"--mode", "green", "--allreduce", "8"})
                .find("--allreduce: needs one rank per instance; --mode green runs k instances in one rank"),
            std::string::npos);
  EXPECT_NE(error_of({"--mode", "green", "--mix", "matmul:1,nbody:1"})
                .find("--mix: tenants are separate ranks; --mode green runs one rank per GPU"),
            std::string::npos);
  EXPECT_EQ(error_of({"--mode", "green", "--ranks-per-gpu", "1,2,4"}), "");
  EXPECT_NE(usage_text().find("green"), std::string::npos);
}

// Where no GPU is usable (no driver, or none visible) the mode fails with one
// line naming the call that could not be made.
TEST(GreenContextWithoutGpu, FailsWithOneLineNamingTheCall) {
  if (gpu_usable()) GTEST_SKIP() << "a GPU is usable";
  try {
    const GreenPartition partition(0, 2);
    FAIL() << "expected FatalError";
  } catch (const FatalError& e) {
    const std::string message = e.what();
    EXPECT_EQ(message.find('\n'), std::string::npos) << message;
    EXPECT_TRUE(message.find(" failed: ") != std::string::npos ||
                message.find(": not provided by this NVIDIA driver") != std::string::npos)
        << message;
  }
}

class GreenContexts : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!gpu_usable()) GTEST_SKIP() << "no usable CUDA GPU";
    MPSB_CUDA(cudaSetDevice(0));
    MPSB_CUDA(cudaFree(nullptr));  // the primary context, before any green one
  }
};

// What one instance saw in its green context, on its own thread as in measure.cpp.
struct InstanceReport {
  int sm_count = 0;
  bool stream_inside = false;
  std::set<int> sm_ids;  // SMs its kernel's blocks ran on
  std::vector<std::string> failures;  // kernels that did not verify
  std::string error;
};

InstanceReport run_in_green_context(const GreenPartition& partition, int instance, bool every_kernel) {
  InstanceReport report;
  try {
    MPSB_CUDA(cudaSetDevice(0));
    const GreenContext green(partition, instance);
    report.sm_count = green.sm_count();
    cudaStream_t stream = nullptr;
    MPSB_CUDA(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
    report.stream_inside = green.holds_stream(stream);
    // Many more blocks than SMs, each lasting ~50 us at 2 GHz: they spread over every SM allowed.
    for (const int id : sm_ids_of_blocks(stream, 8 * partition.device_sm_count(), 100'000)) report.sm_ids.insert(id);
    if (every_kernel) {
      for (const auto& k : kernel_registry()) {
        WorkloadArgs args;
        args.device = DeviceKind::gpu;
        args.gpu_ordinal = 0;
        args.stream = stream;
        args.precision = k.default_precisions.front();
        args.size = k.default_gpu_sizes.front();
        auto w = k.make(args);
        w->setup(11 + static_cast<std::uint64_t>(instance));
        for (int i = 0; i < 2; ++i) w->run();
        w->sync();
        const Verification v = w->verify();
        if (!v.ok) report.failures.push_back(k.name + " " + args.precision + ": " + v.detail);
      }
    }
    MPSB_CUDA(cudaStreamDestroy(stream));  // before its green context
  } catch (const std::exception& e) {
    report.error = e.what();
  }
  return report;
}

void check_partitions(int k, bool every_kernel) {
  const GreenPartition partition(0, k);
  const int sms = partition.device_sm_count();
  const int expected = green_partition_sm_count(sms, k, partition.granularity());
  ASSERT_EQ(partition.instances(), k);
  ASSERT_GT(expected, 0) << sms << " SMs cannot hold " << k << " partitions";
  for (int i = 0; i < k; ++i) {
    EXPECT_EQ(partition.group_sm_count(i), expected)
        << "group " << i << " of " << k << " on " << sms << " SMs (minimum partition "
        << partition.granularity().min_partition << ", alignment " << partition.granularity().alignment << ")";
  }

  std::vector<InstanceReport> reports(static_cast<std::size_t>(k));
  std::vector<std::thread> threads;
  for (int i = 0; i < k; ++i) {
    threads.emplace_back([&, i] { reports[static_cast<std::size_t>(i)] = run_in_green_context(partition, i, every_kernel); });
  }
  for (auto& t : threads) t.join();

  std::set<int> seen;
  for (int i = 0; i < k; ++i) {
    const InstanceReport& r = reports[static_cast<std::size_t>(i)];
    ASSERT_EQ(r.error, "") << "instance " << i << " of " << k;
    EXPECT_EQ(r.sm_count, partition.group_sm_count(i)) << "instance " << i << " of " << k;
    EXPECT_TRUE(r.stream_inside) << "instance " << i << "'s stream is not in its green context";
    EXPECT_FALSE(r.sm_ids.empty());
    EXPECT_LE(static_cast<int>(r.sm_ids.size()), r.sm_count)
        << "instance " << i << " of " << k << " ran on more SMs than its green context holds";
    for (const int id : r.sm_ids) {
      EXPECT_GE(id, 0) << "a block of instance " << i << " did not run";  // %smid need not be below the SM count
      EXPECT_TRUE(seen.insert(id).second) << "SM " << id << " ran blocks of two instances: partitions overlap";
    }
    for (const auto& f : r.failures) ADD_FAILURE() << "instance " << i << " of " << k << ": " << f;
  }
}

TEST_F(GreenContexts, OneInstanceHoldsTheWholeGpu) {
  const GreenPartition partition(0, 1);
  EXPECT_EQ(partition.group_sm_count(0), partition.device_sm_count());
  const InstanceReport r = run_in_green_context(partition, 0, false);
  ASSERT_EQ(r.error, "");
  EXPECT_EQ(r.sm_count, partition.device_sm_count());
  EXPECT_TRUE(r.stream_inside);
}

TEST_F(GreenContexts, TwoPartitionsEachRunEveryKernel) { check_partitions(2, true); }

TEST_F(GreenContexts, FourPartitions) { check_partitions(4, false); }

TEST_F(GreenContexts, TooManyPartitionsNameTheSplit) {
  int sms = 0;
  MPSB_CUDA(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0));
  if (sms / kMaxStreamInstances >= 2) GTEST_SKIP() << sms << " SMs may hold " << kMaxStreamInstances << " partitions";
  try {
    const GreenPartition partition(0, kMaxStreamInstances);
    FAIL() << "expected FatalError";
  } catch (const FatalError& e) {
    EXPECT_NE(std::string(e.what()).find("cuDevSmResourceSplitByCount: cannot split the " + std::to_string(sms) +
                                         " SMs of GPU 0 into 64 disjoint partitions"),
              std::string::npos)
        << e.what();
  }
}

TEST_F(GreenContexts, TheContextIsCurrentOnlyWhileItLives) {
  const GreenPartition partition(0, 2);
  {
    const GreenContext green(partition, 1);
    cudaStream_t inside = nullptr;
    MPSB_CUDA(cudaStreamCreateWithFlags(&inside, cudaStreamNonBlocking));
    EXPECT_TRUE(green.holds_stream(inside));
    MPSB_CUDA(cudaStreamDestroy(inside));
  }
  // The primary context is current again: a stream made now is in no green context.
  cudaStream_t primary = nullptr;
  MPSB_CUDA(cudaStreamCreateWithFlags(&primary, cudaStreamNonBlocking));
  {
    const GreenContext green(partition, 0);
    EXPECT_FALSE(green.holds_stream(primary));
  }
  MPSB_CUDA(cudaStreamDestroy(primary));
}

}  // namespace
}  // namespace mpsb
