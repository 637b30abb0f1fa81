// Every registered kernel at every precision on the GPU, against its float64
// CPU reference. Skips cleanly where no GPU is usable (CI); runs for real on
// the GPU machine.
#include <gtest/gtest.h>

#include <cuda_runtime_api.h>

#include "gpu_test.hpp"
#include "registry.hpp"
#include "runtime/check.hpp"

namespace mpsb {
namespace {

class GpuKernels : public GpuStreamTest {
 protected:
  std::unique_ptr<Workload> make(const KernelInfo& k, const std::string& precision, std::int64_t size) const {
    WorkloadArgs args;
    args.device = DeviceKind::gpu;
    args.gpu_ordinal = 0;
    args.stream = stream_;
    args.precision = precision;
    args.size = size;
    return k.make(args);
  }
};

TEST_F(GpuKernels, EveryKernelAndPrecisionVerifies) {
  ASSERT_FALSE(kernel_registry().empty());
  for (const auto& k : kernel_registry()) {
    for (const auto& p : k.precisions) {
      for (const auto size : {k.default_gpu_sizes.front(), k.default_cpu_sizes.front()}) {
        auto w = make(k, p, size);
        w->setup(7);
        for (int i = 0; i < 3; ++i) w->run();
        w->sync();
        const Verification v = w->verify();
        EXPECT_TRUE(v.ok) << k.name << " " << p << " size " << size << ": " << v.detail << " (error "
                          << v.max_rel_error << ", tolerance " << v.tolerance << ")";
        EXPECT_GT(v.checked, 0) << k.name << " " << p;
      }
    }
  }
}

TEST_F(GpuKernels, OutputsPoisonedBeforeTheLastRepetitionAreRewritten) {
  for (const auto& k : kernel_registry()) {
    auto w = make(k, k.precisions.front(), k.default_cpu_sizes.front());
    w->setup(5);
    w->run();
    w->poison_outputs();  // as the harness does, untimed
    w->sync();
    w->run();
    w->sync();
    const Verification v = w->verify();
    EXPECT_TRUE(v.ok) << k.name << ": " << v.detail;
  }
}

TEST_F(GpuKernels, UnrunWorkloadFailsVerification) {
  // Outputs start poisoned: a kernel that never ran must not pass.
  for (const auto& k : kernel_registry()) {
    auto w = make(k, k.precisions.front(), k.default_cpu_sizes.front());
    w->setup(3);
    w->sync();
    EXPECT_FALSE(w->verify().ok) << k.name;
  }
}

}  // namespace
}  // namespace mpsb
