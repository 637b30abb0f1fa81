// matmul's check of C on the device (kernels/matmul_check.hpp, issue 28): the first entry that is not
// finite and the sampled values, as the host check finds them, and the GPU workload verified through it
// above the full-check size. Skips cleanly where no GPU is usable (CI); runs for real on the GPU machine.
#include <gtest/gtest.h>

#include <cuda_bf16.h>
#include <cuda_runtime_api.h>

#include <cmath>
#include <limits>
#include <vector>

#include "device_buffer.hpp"
#include "gpu_test.hpp"
#include "matmul_check.hpp"
#include "matmul_inputs.hpp"
#include "registry.hpp"
#include "runtime/check.hpp"

namespace mpsb::matmul {
namespace {

class DeviceCheck : public GpuStreamTest {
 protected:
  template <typename T>
  DeviceBuffer upload(const std::vector<T>& host) const {
    DeviceBuffer d(host.size() * sizeof(T));
    // On the test's stream and waited for: a cudaMemcpy from pageable memory may return before its DMA
    // ends, and the non-blocking stream would not wait for it (seen on an H100: a stale C passed).
    MPSB_CUDA(cudaMemcpyAsync(d.as<void>(), host.data(), d.bytes(), cudaMemcpyHostToDevice, stream_));
    MPSB_CUDA(cudaStreamSynchronize(stream_));
    return d;
  }
};

constexpr std::int64_t kN = 600;  // 360,000 entries: more than one pass of the scan's grid-stride loop

TEST_F(DeviceCheck, FindsTheFirstNonFiniteEntryAndNoneInAFiniteMatrix) {
  std::vector<float> c(kN * kN);
  for (std::size_t i = 0; i < c.size(); ++i) c[i] = static_cast<float>(i % 1000) * 0.5f - 250.0f;
  const ProductCheckInput clean = check_on_device(upload(c).as<void>(), kN, false, {0, 7, kN * kN - 1}, stream_);
  EXPECT_TRUE(clean.all_finite);
  ASSERT_EQ(clean.at_entries.size(), 3u);
  EXPECT_EQ(clean.at_entries[0], c[0]);
  EXPECT_EQ(clean.at_entries[1], c[7]);
  EXPECT_EQ(clean.at_entries[2], c[kN * kN - 1]);
  // Two bad entries far apart: the first in row-major order is the one named, with its value.
  c[250'001] = std::numeric_limits<float>::infinity();
  c[123'457] = NAN;
  const ProductCheckInput bad = check_on_device(upload(c).as<void>(), kN, false, {0}, stream_);
  EXPECT_FALSE(bad.all_finite);
  EXPECT_EQ(bad.first_nonfinite, 123'457u);
  EXPECT_TRUE(std::isnan(bad.first_nonfinite_value));
}

TEST_F(DeviceCheck, ReadsBfloat16) {
  std::vector<__nv_bfloat16> c(kN * kN, __float2bfloat16(1.5f));
  c[42] = __float2bfloat16(-3.0f);
  const ProductCheckInput clean = check_on_device(upload(c).as<void>(), kN, true, {42, 43}, stream_);
  EXPECT_TRUE(clean.all_finite);
  ASSERT_EQ(clean.at_entries.size(), 2u);
  EXPECT_EQ(clean.at_entries[0], -3.0f);
  EXPECT_EQ(clean.at_entries[1], 1.5f);
  c[kN * kN - 2] = __float2bfloat16(-std::numeric_limits<float>::infinity());
  const ProductCheckInput bad = check_on_device(upload(c).as<void>(), kN, true, {42}, stream_);
  EXPECT_FALSE(bad.all_finite);
  EXPECT_EQ(bad.first_nonfinite, static_cast<std::size_t>(kN * kN - 2));
  EXPECT_EQ(bad.first_nonfinite_value, -std::numeric_limits<float>::infinity());
}

// The GPU workload makes A and B on the device: the values make_inputs makes on the host, bit for bit,
// bf16 rounding included (the reference is computed from the host's).
TEST_F(DeviceCheck, MakesTheInputsTheHostMakes) {
  for (const bool bf16 : {false, true}) {
    const Inputs host = make_inputs(bf16 ? "bf16" : "fp32", kN, 77);
    for (const Operand operand : {Operand::a, Operand::b}) {
      const std::vector<float>& want = operand == Operand::a ? host.a : host.b;
      DeviceBuffer d(want.size() * (bf16 ? sizeof(__nv_bfloat16) : sizeof(float)));
      fill_on_device(d.as<void>(), bf16, want.size(), operand_seed(77, operand), stream_);
      MPSB_CUDA(cudaStreamSynchronize(stream_));
      std::vector<float> got(want.size());
      if (bf16) {
        std::vector<__nv_bfloat16> raw(want.size());
        MPSB_CUDA(cudaMemcpy(raw.data(), d.as<void>(), d.bytes(), cudaMemcpyDeviceToHost));
        for (std::size_t i = 0; i < raw.size(); ++i) got[i] = __bfloat162float(raw[i]);
      } else {
        MPSB_CUDA(cudaMemcpy(got.data(), d.as<void>(), d.bytes(), cudaMemcpyDeviceToHost));
      }
      for (std::size_t i = 0; i < want.size(); ++i) {
        ASSERT_EQ(got[i], want[i]) << (bf16 ? "bf16 " : "fp32 ") << (operand == Operand::a ? "A" : "B") << " " << i;
      }
    }
  }
}

// Above 256 the workload checks sampled entries: every precision verifies after a run and fails,
// naming an entry that is not finite, when C was never written.
TEST_F(DeviceCheck, TheWorkloadVerifiesSampledEntriesAndRefusesAnUnwrittenC) {
  const KernelInfo* k = find_kernel("matmul");
  ASSERT_NE(k, nullptr);
  for (const auto& precision : k->precisions) {
    WorkloadArgs args;
    args.device = DeviceKind::gpu;
    args.gpu_ordinal = 0;
    args.stream = stream_;
    args.precision = precision;
    args.size = 512;
    auto unrun = k->make(args);
    unrun->setup(11);
    const Verification never = unrun->verify();
    EXPECT_FALSE(never.ok) << precision;
    EXPECT_NE(never.detail.find("C[0][0] is not finite"), std::string::npos) << precision << ": " << never.detail;
    auto w = k->make(args);
    w->setup(11);
    w->run();
    w->sync();
    const Verification v = w->verify();
    EXPECT_TRUE(v.ok) << precision << ": " << v.detail;
    EXPECT_EQ(v.checked, 1028) << precision;  // the four corners and 1,024 sampled entries
  }
}

}  // namespace
}  // namespace mpsb::matmul
