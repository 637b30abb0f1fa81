#include "hybrid_cpu.hpp"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <sstream>
#include <stdexcept>

#include "random_inputs.hpp"

namespace mpsb::hybrid {
namespace {

inline float relax(float left, float centre, float right, float forcing) {
  return centre + kDiffusion * (left + right - 2.0f * centre) + kForcingRate * (forcing - centre);
}

void sweep(const float* __restrict in, const float* __restrict forcing, float* __restrict out, std::int64_t n) {
  if (n == 1) {
    out[0] = relax(in[0], in[0], in[0], forcing[0]);
    return;
  }
  out[0] = relax(in[0], in[0], in[1], forcing[0]);
  for (std::int64_t i = 1; i < n - 1; ++i) out[i] = relax(in[i - 1], in[i], in[i + 1], forcing[i]);
  out[n - 1] = relax(in[n - 2], in[n - 1], in[n - 1], forcing[n - 1]);
}

double seconds(PhaseClock::clock::duration d) { return std::chrono::duration<double>(d).count(); }

}  // namespace

int sweeps_for(const std::string& p) {
  if (p == "fp32") return kBalancedSweeps;
  if (p == "fp32-cpu-heavy") return kCpuHeavySweeps;
  throw std::invalid_argument("hybrid: unsupported precision " + p);
}

void fill_initial(float* state, float* forcing, std::int64_t n, std::uint64_t seed) {
  const auto count = static_cast<std::size_t>(n);
  fill_uniform(state, count, seed, 0.0f, 1.0f);
  fill_uniform(forcing, count, seed ^ 0x2545F4914F6CDD1Dull, 0.0f, 1.0f);
}

void cpu_step(const float* prev, const float* forcing, float* next, float* scratch, std::int64_t n, int sweeps) {
  if (sweeps < 1) throw std::invalid_argument("hybrid: sweeps must be positive");
  // Ping-pong so that the last sweep lands in next.
  const float* src = prev;
  for (int k = 0; k < sweeps; ++k) {
    float* dst = (sweeps - 1 - k) % 2 == 0 ? next : scratch;
    sweep(src, forcing, dst, n);
    src = dst;
  }
}

void react_all(const float* in, float* out, std::int64_t n) {
  for (std::int64_t i = 0; i < n; ++i) out[i] = react(in[i]);
}

Verification verify_reaction(const float* in, const float* out, std::int64_t n, std::uint64_t sample_seed) {
  Verification v;
  v.tolerance = kTolerance;
  for (std::int64_t i = 0; i < n; ++i) {
    if (!std::isfinite(out[i])) {
      std::ostringstream msg;
      msg << "out[" << i << "] is not finite (" << out[i] << ")";
      v.detail = msg.str();
      v.max_rel_error = INFINITY;
      return v;
    }
  }
  auto check_cell = [&](std::int64_t i) {
    const double ref = react(static_cast<double>(in[i]));
    // A non-finite input (poisoned, never written) makes the comparison meaningless.
    const double err = std::isfinite(ref) ? std::fabs(static_cast<double>(out[i]) - ref) / std::max(std::fabs(ref), 1.0)
                                          : INFINITY;
    ++v.checked;
    if (err > v.max_rel_error) {
      v.max_rel_error = err;
      if (!(err <= v.tolerance)) {
        std::ostringstream msg;
        msg << "out[" << i << "] = " << out[i] << " for input " << in[i] << ", float64 reference " << ref;
        v.detail = msg.str();
      }
    }
  };
  if (n <= kFullCheckMaxCells) {
    for (std::int64_t i = 0; i < n; ++i) check_cell(i);
  } else {
    check_cell(0);
    check_cell(n - 1);
    std::uint64_t state = sample_seed;
    for (std::int64_t s = 0; s < kSampledCells; ++s) {
      check_cell(static_cast<std::int64_t>(splitmix64(state) % static_cast<std::uint64_t>(n)));
    }
  }
  v.ok = v.checked > 0 && v.max_rel_error <= v.tolerance;
  if (v.ok) v.detail.clear();
  return v;
}

Work work_per_iteration(std::int64_t n, int sweeps) {
  const double cells = static_cast<double>(n);
  return Work{cells * (kSweepFlops * sweeps + kReactionFlops), 2.0 * cells * kElementBytes, 1, "iteration"};
}

void PhaseClock::add(clock::duration cpu, clock::duration gpu) {
  if (count_ == 0) {
    first_cpu_s_ = seconds(cpu);
    first_gpu_s_ = seconds(gpu);
  } else {
    cpu_sum_s_ += seconds(cpu);
    gpu_sum_s_ += seconds(gpu);
  }
  ++count_;
}

void PhaseClock::restart() {
  if (count_ > 0) count_ = 1;
  cpu_sum_s_ = gpu_sum_s_ = 0;
}

std::vector<std::pair<std::string, double>> PhaseClock::details() const {
  if (count_ == 0) return {};
  if (count_ == 1) return {{"cpu_phase_s", first_cpu_s_}, {"gpu_phase_s", first_gpu_s_}};
  const double runs = static_cast<double>(count_ - 1);
  return {{"cpu_phase_s", cpu_sum_s_ / runs}, {"gpu_phase_s", gpu_sum_s_ / runs}};
}

CpuPhaseArrays::CpuPhaseArrays(std::int64_t n, int sweeps, HostMemory memory)
    : arrays_(sweeps > 1 ? kScratchSlot + 1 : kScratchSlot, n, memory) {}

namespace {

// --device cpu: the same iteration on one thread; the offload is react_all,
// and the copy back becomes a host copy so the data flow matches the GPU's.
class HybridCpu final : public HybridWorkload {
 public:
  explicit HybridCpu(const WorkloadArgs& args) : n_(args.size), sweeps_(sweeps_for(args.precision)) {}

  void setup(std::uint64_t seed) override {
    seed_ = seed;
    const auto count = static_cast<std::size_t>(n_);
    host_ = CpuPhaseArrays(n_, sweeps_, HostMemory::pageable);
    fill_initial(host_.prev(), host_.forcing(), n_, seed);
    if (host_.scratch() != nullptr) std::fill(host_.scratch(), host_.scratch() + n_, 0.0f);
    std::fill(host_.input(), host_.input() + n_, NAN);
    output_.assign(count, NAN);  // an offload that never ran cannot pass
    phases_ = PhaseClock{};
  }

  void run() override {
    const auto t0 = PhaseClock::clock::now();
    cpu_step(host_.prev(), host_.forcing(), host_.input(), host_.scratch(), n_, sweeps_);
    const auto t1 = PhaseClock::clock::now();
    react_all(host_.input(), output_.data(), n_);
    std::memcpy(host_.prev(), output_.data(), output_.size() * sizeof(float));
    const auto t2 = PhaseClock::clock::now();
    phases_.add(t1 - t0, t2 - t1);
  }

  void sync() override {}
  Work work() const override { return work_per_iteration(n_, sweeps_); }
  Verification verify() override { return verify_reaction(host_.input(), output_.data(), n_, seed_ + 1); }
  std::vector<std::pair<std::string, double>> details() const override { return phases_.details(); }
  void restart_details() override { phases_.restart(); }
  const float* last_input() const override { return host_.input(); }

 private:
  std::int64_t n_;
  int sweeps_;
  std::uint64_t seed_ = 0;
  CpuPhaseArrays host_;
  std::vector<float> output_;  // stands in for the GPU's output buffer
  PhaseClock phases_;
};

}  // namespace

std::unique_ptr<Workload> make_cpu_workload(const WorkloadArgs& args) { return std::make_unique<HybridCpu>(args); }

}  // namespace mpsb::hybrid
