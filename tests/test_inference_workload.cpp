// The inference kernel's work model, its registry entry and its CPU workload (options, shapes outside the
// ranges, a poisoned output, seeds). The storage formats, the forward pass and the verification:
// test_inference_cpu.cpp.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <vector>

#include "inference_cpu.hpp"
#include "random_inputs.hpp"
#include "registry.hpp"

namespace mpsb::inference {
namespace {

TEST(Work, CountsBatchHiddenAndLayers) {
  const Work w = work_per_iteration(Shape{3, 32, 2});
  EXPECT_DOUBLE_EQ(w.flops, 2.0 * 3 * 32 * 32 * 2);                      // 12288
  EXPECT_DOUBLE_EQ(w.bytes, 2.0 * (2 * 32 * 32 + 2 * 32 + 2 * 3 * 32));  // weights, biases, in, out: 4608
  EXPECT_DOUBLE_EQ(w.items, 1);
  EXPECT_EQ(w.item_unit, "request");
}

TEST(Work, DeviceBytesCountEveryBufferPadded) {
  // H 32, L 2, B 3: per layer 2048 B of weights + 64 B of bias padded to 256;
  // two activation buffers of 192 B padded to 256; the 32 MiB workspace.
  EXPECT_DOUBLE_EQ(device_bytes(Shape{3, 32, 2}), 2 * (2048 + 256) + 2 * 256 + 32.0 * 1024 * 1024);
  EXPECT_DOUBLE_EQ(device_bytes(Shape{64, 2048, 4}),
                   4 * (2048.0 * 2048 * 2 + 4096) + 2 * (64.0 * 2048 * 2) + 32.0 * 1024 * 1024);
}

WorkloadArgs cpu_args(const std::string& precision, std::int64_t size, KernelParams params) {
  WorkloadArgs args;
  args.device = DeviceKind::cpu;
  args.precision = precision;
  args.size = size;
  args.params = std::move(params);
  return args;
}

TEST(InferenceKernelInfo, DeclaresTheKernel) {
  const KernelInfo* k = find_kernel("inference");
  ASSERT_NE(k, nullptr);
  EXPECT_EQ(k->precisions, (std::vector<std::string>{"fp16", "bf16"}));
  EXPECT_EQ(k->default_precisions, (std::vector<std::string>{"fp16"}));
  EXPECT_EQ(k->default_gpu_sizes, (std::vector<std::int64_t>{8, 64}));
  EXPECT_EQ(k->default_cpu_sizes, (std::vector<std::int64_t>{1, 4}));
  EXPECT_EQ(k->max_size, 4096);
  EXPECT_EQ(k->primary, PrimaryMetric::items);
  EXPECT_TRUE(k->per_iteration_latency);
  EXPECT_FALSE(k->summary.empty());
  EXPECT_EQ(k->suite_order, 40);
  for (const auto& other : kernel_registry()) {
    if (other.name != "inference") {
      EXPECT_LT(other.suite_order, k->suite_order) << other.name;
    }
  }
  ASSERT_EQ(k->params.size(), 2u);
  EXPECT_EQ(k->params[0].name, "hidden");
  EXPECT_EQ(k->params[0].default_value, 2048);
  EXPECT_EQ(k->params[0].min, 16);
  EXPECT_EQ(k->params[0].max, 16384);
  EXPECT_EQ(k->params[1].name, "layers");
  EXPECT_EQ(k->params[1].default_value, 4);
  EXPECT_EQ(k->params[1].min, 1);
  EXPECT_EQ(k->params[1].max, 64);
  for (const auto& p : k->params) EXPECT_FALSE(p.doc.empty()) << p.name;
}

TEST(InferenceKernelInfo, DeviceBytesFollowTheParams) {
  const KernelInfo* k = find_kernel("inference");
  ASSERT_NE(k, nullptr);
  const double small = k->device_bytes("fp16", 8, {{"hidden", 1024}, {"layers", 4}});
  const double large = k->device_bytes("fp16", 8, {{"hidden", 2048}, {"layers", 4}});
  const double deep = k->device_bytes("fp16", 8, {{"hidden", 2048}, {"layers", 8}});
  EXPECT_GT(large, small);
  EXPECT_GT(deep, large);
  EXPECT_GE(large, 4 * 2048.0 * 2048 * 2);                   // at least the weights
  EXPECT_DOUBLE_EQ(k->device_bytes("bf16", 8, {}), large);   // absent params: the defaults
  EXPECT_DOUBLE_EQ(k->device_bytes("fp16", 3, {{"hidden", 32}, {"layers", 2}}), device_bytes(Shape{3, 32, 2}));
}

TEST(InferenceCpuWorkload, HonoursTheParams) {
  const KernelInfo* k = find_kernel("inference");
  ASSERT_NE(k, nullptr);
  for (const auto& p : k->precisions) {
    auto w = k->make(cpu_args(p, 3, {{"hidden", 32}, {"layers", 2}}));
    w->setup(11);
    w->run();
    w->sync();
    EXPECT_DOUBLE_EQ(w->work().flops, 2.0 * 3 * 32 * 32 * 2);
    EXPECT_DOUBLE_EQ(w->work().bytes, 2.0 * (2 * 32 * 32 + 2 * 32 + 2 * 3 * 32));
    const Verification v = w->verify();
    EXPECT_TRUE(v.ok) << p << ": " << v.detail;
    EXPECT_EQ(v.checked, 3 * 32);
    EXPECT_GE(v.tolerance, tolerance(storage_of(p), 0));
  }
  // No params (as tests and the micro-benchmarks pass them): the defaults.
  auto w = k->make(cpu_args("fp16", 1, {}));
  EXPECT_DOUBLE_EQ(w->work().flops, 2.0 * 2048 * 2048 * 4);
}

TEST(InferenceCpuWorkload, RejectsAShapeOutsideTheRanges) {
  const KernelInfo* k = find_kernel("inference");
  ASSERT_NE(k, nullptr);
  EXPECT_THROW(k->make(cpu_args("fp16", 4, {{"hidden", 15}})), std::invalid_argument);
  EXPECT_THROW(k->make(cpu_args("fp16", 4, {{"layers", 65}})), std::invalid_argument);
  EXPECT_THROW(k->make(cpu_args("fp16", 4097, {})), std::invalid_argument);
  EXPECT_THROW(k->make(cpu_args("fp32", 4, {})), std::invalid_argument);
}

TEST(InferenceCpuWorkload, PoisonedOutputFailsUntilTheNextRun) {
  auto w = find_kernel("inference")->make(cpu_args("fp16", 4, {{"hidden", 64}, {"layers", 3}}));
  w->setup(1);
  w->run();
  ASSERT_TRUE(w->verify().ok);
  w->poison_outputs();  // what the harness does before the last repetition
  w->sync();
  EXPECT_FALSE(w->verify().ok);
  w->run();
  EXPECT_TRUE(w->verify().ok);
}

TEST(InferenceCpuWorkload, UnrunWorkloadFailsVerification) {
  auto w = find_kernel("inference")->make(cpu_args("bf16", 2, {{"hidden", 16}, {"layers", 1}}));
  w->setup(1);  // output NaN, never computed
  const Verification v = w->verify();
  EXPECT_FALSE(v.ok);
  EXPECT_NE(v.detail.find("not finite"), std::string::npos) << v.detail;
}

TEST(InferenceCpuWorkload, SeedsChangeTheModel) {
  const KernelInfo* k = find_kernel("inference");
  auto a = k->make(cpu_args("fp16", 2, {{"hidden", 16}, {"layers", 2}}));
  auto b = k->make(cpu_args("fp16", 2, {{"hidden", 16}, {"layers", 2}}));
  a->setup(1);
  b->setup(2);
  a->run();
  b->run();
  EXPECT_TRUE(a->verify().ok);
  EXPECT_TRUE(b->verify().ok);
  const Model ma = make_model(Storage::fp16, Shape{2, 16, 2}, 1), mb = make_model(Storage::fp16, Shape{2, 16, 2}, 2);
  EXPECT_NE(ma.weights, mb.weights);
  EXPECT_NE(ma.input, mb.input);
}

}  // namespace
}  // namespace mpsb::inference
