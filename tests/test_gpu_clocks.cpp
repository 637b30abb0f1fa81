// The NVML clock sampler. Without a driver (CI) NVML cannot load and the
// sampler must say so and do nothing; with a GPU it must read a plausible SM
// clock while a kernel runs.
#include <gtest/gtest.h>

#include <cuda_runtime_api.h>

#include <chrono>
#include <thread>

#include "measure/clock.hpp"
#include "measure/gpu_clocks.hpp"
#include "registry.hpp"
#include "runtime/check.hpp"
#include "sharing/device.hpp"

namespace mpsb {
namespace {

bool gpu_usable() {
  int count = 0;
  const bool ok = cudaGetDeviceCount(&count) == cudaSuccess && count > 0;
  static_cast<void>(cudaGetLastError());
  return ok;
}

// Whatever the machine: an unknown GPU leaves the sampler unavailable with a
// reason, and using it anyway is harmless.
TEST(ClockSampler, UnknownGpuIsUnavailableWithAReason) {
  ClockSampler sampler("GPU-00000000-0000-0000-0000-000000000000");
  EXPECT_FALSE(sampler.available());
  EXPECT_FALSE(sampler.note().empty());
  EXPECT_EQ(sampler.note().find('\n'), std::string::npos) << sampler.note();
  sampler.start();
  const ClockWindow w = sampler.stop();
  EXPECT_EQ(w.samples, 0);
  EXPECT_FALSE(w.mean_mhz.has_value());
  EXPECT_EQ(w.events, 0u);
}

TEST(ClockSampler, StopWithoutStartAndRepeatedStartsAreSafe) {
  ClockSampler sampler("GPU-00000000-0000-0000-0000-000000000000");
  EXPECT_EQ(sampler.stop().samples, 0);
  sampler.start();
  sampler.start();
}

TEST(ClockSampler, ReadsAPlausibleSmClockWhileAKernelRuns) {
  if (!gpu_usable()) GTEST_SKIP() << "no usable CUDA GPU";
  const GpuInfo gpu = open_gpu(0);
  ClockSampler sampler(gpu.uuid);
  if (!sampler.available()) GTEST_SKIP() << "NVML not usable here: " << sampler.note();
  ASSERT_TRUE(sampler.reference_mhz().has_value()) << sampler.note();
  EXPECT_GT(*sampler.reference_mhz(), 300.0);
  EXPECT_LT(*sampler.reference_mhz(), 5000.0);

  cudaStream_t stream = nullptr;
  MPSB_CUDA(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
  WorkloadArgs args;
  args.device = DeviceKind::gpu;
  args.gpu_ordinal = 0;
  args.stream = stream;
  args.precision = "fp32";
  args.size = 2048;
  auto work = find_kernel("matmul")->make(args);
  work->setup(3);
  work->run();
  work->sync();

  sampler.start();
  const double begin = now_seconds();
  while (now_seconds() - begin < 0.3) {
    for (int i = 0; i < 10; ++i) work->run();
    work->sync();
  }
  const ClockWindow w = sampler.stop();
  MPSB_CUDA(cudaStreamDestroy(stream));

  EXPECT_GE(w.samples, 2) << "one at start, one at stop, one every " << ClockSampler::kPeriodMs << " ms";
  EXPECT_GE(w.samples, 10);  // 0.3 s at 5 ms
  ASSERT_TRUE(w.mean_mhz.has_value()) << "every sample idle while a GEMM ran?";
  EXPECT_GT(*w.mean_mhz, 100.0);
  EXPECT_LE(*w.mean_mhz, 1.1 * *sampler.reference_mhz());
  EXPECT_LE(*w.min_mhz, *w.mean_mhz);
  EXPECT_GE(*w.max_mhz, *w.mean_mhz);
  std::cout << "SM clock " << *w.mean_mhz << " MHz (min " << *w.min_mhz << ", reference " << *sampler.reference_mhz()
            << "), " << w.samples << " samples, " << w.missing << " missing, events";
  for (const auto& name : clock_event_names(w.events)) std::cout << " " << name;
  std::cout << "\n";
}

}  // namespace
}  // namespace mpsb
