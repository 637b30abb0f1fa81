#include "measure/cpu_probe.hpp"

#include <algorithm>

#include "runtime/steady_clock.hpp"

namespace mpsb {
namespace {

// The probe's own constants, not hybrid's: the probe stays the same work whatever the kernels become.
// Each sweep is a convex average (2 x 0.25 + 0.1 <= 1), so the field stays in [0, 1], never denormal.
constexpr float kDiffusion = 0.25f;
constexpr float kPull = 0.1f;
constexpr int kFieldSlots[2] = {0, 2};  // ping-pong
constexpr int kForcingSlot = 1;

__attribute__((noinline)) void sweep(const float* __restrict in, const float* __restrict forcing,
                                     float* __restrict out, int n) {
  out[0] = in[0] + kPull * (forcing[0] - in[0]);
  for (int i = 1; i < n - 1; ++i) {
    out[i] = in[i] + kDiffusion * (in[i - 1] + in[i + 1] - 2.0f * in[i]) + kPull * (forcing[i] - in[i]);
  }
  out[n - 1] = in[n - 1] + kPull * (forcing[n - 1] - in[n - 1]);
}

}  // namespace

CpuProbe::CpuProbe() : arrays_(3, kCells, HostMemory::pageable) {
  for (int i = 0; i < kCells; ++i) {
    // A fixed field in [0, 1]: the same work in every process.
    const float x = static_cast<float>((i * 37) % kCells) / static_cast<float>(kCells);
    arrays_.array(kFieldSlots[0])[i] = x;
    arrays_.array(kFieldSlots[1])[i] = x;
    arrays_.array(kForcingSlot)[i] = 1.0f - x;
  }
}

double CpuProbe::seconds() {
  double fastest = 0;
  for (int run = 0; run < kRuns; ++run) {
    const double start = now_seconds();
    for (int s = 0; s < kSweeps; ++s) {
      const int next = 1 - current_;
      sweep(arrays_.array(kFieldSlots[current_]), arrays_.array(kForcingSlot), arrays_.array(kFieldSlots[next]),
            kCells);
      current_ = next;
    }
    const double took = now_seconds() - start;
    fastest = run == 0 ? took : std::min(fastest, took);
  }
  return fastest;
}

double CpuProbe::checksum() const {
  double sum = 0;
  const float* field = arrays_.array(kFieldSlots[current_]);
  for (int i = 0; i < kCells; ++i) sum += field[i];
  return sum;
}

std::string cpu_probe_name() {
  return "relax_sweep_" + std::to_string(CpuProbe::kCells) + "x" + std::to_string(CpuProbe::kSweeps);
}

}  // namespace mpsb
