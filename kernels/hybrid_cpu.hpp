// Hybrid pieces that run on the host: the CPU phase (relaxation sweeps), the
// offloaded reaction map, the --device cpu workload, the float64 verification
// and the per-phase clock behind details(). The reaction map is a template
// compiled for the GPU kernel, the --device cpu workload (float) and the
// reference (double) alike, so all three evaluate one formula.
#pragma once

#include <chrono>
#include <cstdint>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "host_device.hpp"
#include "staggered_host_arrays.hpp"
#include "workload.hpp"

namespace mpsb::hybrid {

// The model: operator splitting of a 1-D reaction-diffusion field u in [0, 1].
// CPU phase: `sweeps` explicit relaxation sweeps (diffusion plus a pull toward
// a fixed random forcing field), starting from the previous offload's output.
// Offload: every cell integrates du/dt = u (1 - u) (u - a) for unit time by RK4.
constexpr float kDiffusion = 0.25f;    // 2 kDiffusion + kForcingRate <= 1: each sweep is a convex average
constexpr float kForcingRate = 0.1f;   // keeps the field away from the reaction's fixed points 0, a, 1
constexpr double kThreshold = 0.3;     // a: the unstable fixed point of the reaction
constexpr int kReactionSteps = 256;
constexpr double kReactionDt = 1.0 / kReactionSteps;

// Flops as written in the source (a fused multiply-add counts 2).
constexpr double kSweepFlops = 8;                               // per cell and sweep
constexpr double kReactionFlops = 28.0 * kReactionSteps;        // per cell: 4 rates x 4 + 3 stages x 2 + 6
constexpr double kElementBytes = 4;

// CPU sweeps per iteration, from the precision name (the arithmetic is fp32 in
// both): "fp32" balances the CPU phase against the offload on one H100 and
// one host core; "fp32-cpu-heavy" does 4 times the CPU work.
constexpr int kBalancedSweeps = 1;
constexpr int kCpuHeavySweeps = 4 * kBalancedSweeps;
int sweeps_for(const std::string& precision);  // throws std::invalid_argument

// Error metric: |out - ref| / max(|ref|, 1), i.e. the absolute error on the
// field's own scale (it lives in [0, 1]). Near u = 1 fp32 drops RK4
// increments below half an ulp (2^-25), so a correct fp32 result can be off by
// up to ~ 2^-25 / kReactionDt = 7.6e-6 (5.5e-6 seen over 2M random inputs,
// with and without FMA contraction). The tolerance is 4x that bound (3.1e-5);
// a kernel that takes one step too few is off by 3.3e-4.
constexpr double kTolerance = 4.0 * kReactionSteps / static_cast<double>(1 << 25);
// verify_reaction's reach: every cell up to kFullCheckMaxCells, else both ends and kSampledCells seeded
// cells. A cell's float64 reference is 256 RK4 steps (~7 us on one core): 4096 cells cost ~0.03 s, where
// checking all 65536 had cost 0.5 s of every configuration at that size (issue 28).
constexpr std::int64_t kFullCheckMaxCells = 4096;
constexpr std::int64_t kSampledCells = 4096;

template <typename T>
MPSB_HOST_DEVICE inline T reaction_rate(T u) {
  return u * (T(1) - u) * (u - T(kThreshold));
}

// Unit time of the reaction for one cell. Contractive except near a, where
// errors grow at most by exp(a (1 - a)) ~ 1.23 over the unit time.
template <typename T>
MPSB_HOST_DEVICE inline T react(T u) {
  const T h = T(kReactionDt);
  const T half = T(0.5 * kReactionDt);
  const T sixth = T(kReactionDt / 6);
  for (int s = 0; s < kReactionSteps; ++s) {
    const T k1 = reaction_rate(u);
    const T k2 = reaction_rate(u + half * k1);
    const T k3 = reaction_rate(u + half * k2);
    const T k4 = reaction_rate(u + h * k3);
    u = u + sixth * (k1 + T(2) * (k2 + k3) + k4);
  }
  return u;
}

// Initial field (the "previous offload output" of the first iteration) and
// the forcing field, both uniform in [0, 1].
void fill_initial(float* state, float* forcing, std::int64_t n, std::uint64_t seed);

// The CPU phase: `sweeps` relaxation sweeps from prev into next (zero-flux
// ends). scratch holds n floats when sweeps > 1; prev, next and scratch must
// not overlap.
void cpu_step(const float* prev, const float* forcing, float* next, float* scratch, std::int64_t n, int sweeps);

// The offload done on the host: out[i] = react(in[i]) in float.
void react_all(const float* in, float* out, std::int64_t n);

// out against react<double>(in): every cell for small n, otherwise a seeded
// sample plus both ends; fails on any non-finite output anywhere.
Verification verify_reaction(const float* in, const float* out, std::int64_t n, std::uint64_t sample_seed);

Work work_per_iteration(std::int64_t n, int sweeps);

// Mean wall time of each phase per iteration, over the run() calls since setup
// except the first (the harness's warm-up: lazy module loading, first touch).
// With only one run() so far, that one is reported.
class PhaseClock {
 public:
  using clock = std::chrono::steady_clock;
  void add(clock::duration cpu, clock::duration gpu);
  // From now on as if only the first run had been seen: the next runs are averaged, none left out.
  void restart();
  std::vector<std::pair<std::string, double>> details() const;

 private:
  std::int64_t count_ = 0;  // including the first
  double first_cpu_s_ = 0, first_gpu_s_ = 0;
  double cpu_sum_s_ = 0, gpu_sum_s_ = 0;  // excluding the first
};

// The host arrays the CPU phase touches, in one staggered block
// (staggered_host_arrays.hpp): their offsets modulo 4 KiB, and so the speed of
// the sweep, are the same in every process and every configuration. Both
// workloads use it: pinned on the GPU (prev and input are copied
// asynchronously), ordinary memory on the CPU device.
class CpuPhaseArrays {
 public:
  CpuPhaseArrays() = default;
  CpuPhaseArrays(std::int64_t n, int sweeps, HostMemory memory);
  float* prev() const { return arrays_.array(kPrevSlot); }        // the last offload's result: the next CPU input
  float* forcing() const { return arrays_.array(kForcingSlot); }
  float* input() const { return arrays_.array(kInputSlot); }      // the CPU phase's output: the next offload input
  float* scratch() const { return arrays_.array(kScratchSlot); }  // nullptr with one sweep

  static constexpr int kPrevSlot = 0, kForcingSlot = 1, kInputSlot = 2, kScratchSlot = 3;

 private:
  StaggeredHostArrays arrays_;
};

// Both workloads: the last offload input stays readable so tests can follow
// the data flow from one iteration to the next.
class HybridWorkload : public Workload {
 public:
  virtual const float* last_input() const = 0;  // size floats; NaN before the first run()
};

std::unique_ptr<Workload> make_cpu_workload(const WorkloadArgs& args);

}  // namespace mpsb::hybrid
