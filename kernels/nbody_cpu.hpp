// N-body pieces that run on the host: the problem constants, the inputs, the
// single-threaded step used by --device cpu, and the float64 reference that
// verifies any implementation (CPU or GPU).
//
// Layout everywhere (host vectors and device buffers): 4 values per body.
//   positions:  x, y, z, mass
//   velocities: x, y, z, unused (0)
//   accelerations: x, y, z, unused (0)
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "workload.hpp"

namespace mpsb::nbody {

// G = 1. Softening as in the CUDA samples (softening 0.1, eps^2 = 0.01): it
// bounds every interaction, so no step can produce inf or NaN and the
// self-interaction is exactly zero (dx = 0) without a branch.
constexpr double kSoftening2 = 0.01;
constexpr double kTimeStep = 0.016;  // the samples' default
// The samples' default, and necessary: any damping below 1 lets a long timed
// run freeze the system into one clump smaller than the softening, where
// every acceleration is ~0 by symmetry and no check can tell a right answer
// from a wrong one. Without it the (symplectic) step keeps the cluster alive.
constexpr double kDamping = 1.0;

bool is_supported_precision(const std::string& precision);
double element_bytes(const std::string& precision);  // 4 or 8
// Bound on the force error metric (see verify_step) for a correct result.
double tolerance(const std::string& precision);
// One step: 20 (fp32) or 30 (fp64) flops per interaction, the CUDA samples'
// convention; n^2 interactions; bytes = positions and velocities read and
// written once.
Work step_work(const std::string& precision, std::int64_t n);

// Host copy of a system: 4 * n values each (layout above).
template <typename T>
struct Bodies {
  std::int64_t n = 0;
  std::vector<T> pos, vel;
};

// Positions uniform in the unit ball, masses uniform in [0.5, 1.5) / n (total
// about 1), small random velocities. The values are floats for both
// precisions, so fp32 and fp64 runs of one seed start from the same system.
template <typename T>
Bodies<T> make_bodies(std::int64_t n, std::uint64_t seed);

// All-pairs accelerations a_i = sum_j m_j r_ij / (|r_ij|^2 + eps^2)^1.5, in T
// (float math for float, double for double), j = i included (contributes 0).
template <typename T>
void compute_accelerations(const T* pos, std::int64_t n, T* acc);

// v' = (v + a dt) damping, p' = p + v' dt; masses carried over.
template <typename T>
void integrate(const T* pos_in, const T* vel_in, const T* acc, std::int64_t n, T* pos_out, T* vel_out);

// What one step read and wrote (4 * n values each).
template <typename T>
struct StepView {
  std::int64_t n = 0;
  const T* pos_in = nullptr;
  const T* vel_in = nullptr;
  const T* acc = nullptr;
  const T* pos_out = nullptr;
  const T* vel_out = nullptr;
};

// Checks one step against float64:
//  - every output (and the step's inputs) finite;
//  - for every body when n <= 2048, otherwise bodies 0, n-1 and a seeded
//    random sample: the force error
//        |a_i - a_ref_i|_2 / sum_j |m_j r_ij| (|r_ij|^2 + eps^2)^-1.5
//    (the error relative to the size of what was summed: each term is
//    computed to a few ulps and every rounding of the sum is bounded by it,
//    so cancellation cannot inflate the metric) must not exceed
//    tolerance(); max_rel_error reports it;
//  - the same bodies' new velocity and position follow from their own
//    acceleration by the integration rule (a few ulps); a mismatch fails
//    with max_rel_error = inf.
// checked counts 10 values per checked body (3 accelerations, 7 integrated).
template <typename T>
Verification verify_step(const StepView<T>& step, std::uint64_t sample_seed);

std::unique_ptr<Workload> make_cpu_workload(const WorkloadArgs& args);

}  // namespace mpsb::nbody
