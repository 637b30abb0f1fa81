#include "nbody_cpu.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <sstream>
#include <stdexcept>

#include "random_inputs.hpp"

namespace mpsb::nbody {
namespace {

constexpr std::int64_t kFullCheckMaxN = 2048;  // n^2 float64 reference interactions stay under 5 M
// Sampled bodies cost n float64 reference interactions each (~7 ns on one
// core): about 2^24 in all (~0.12 s), at least 64 bodies even at the largest
// sizes. 2^28 had made the check of N = 65536 (1024 bodies) take 0.5 s of
// every configuration (issue 28); there it now samples 256 bodies.
constexpr std::int64_t kReferenceBudget = std::int64_t{1} << 24;
constexpr std::int64_t kMinSampled = 64, kMaxSampled = 1024;
// Integration is 2-3 roundings per value; 8 epsilons leaves room for the GPU's
// fused multiply-adds against the reference's separate ones.
constexpr double kIntegrationUlps = 8;

template <typename T>
inline void interact(T dx, T dy, T dz, T mass, T eps2, T& ax, T& ay, T& az) {
  const T d2 = dx * dx + dy * dy + dz * dz + eps2;
  const T inv = T(1) / std::sqrt(d2);
  const T s = mass * (inv * inv * inv);
  ax += dx * s;
  ay += dy * s;
  az += dz * s;
}

double norm3(double x, double y, double z) { return std::sqrt(x * x + y * y + z * z); }

// Index of the first body whose first `components` values are not all finite, or -1.
template <typename T>
std::int64_t first_non_finite(const T* data, std::int64_t n, int components) {
  for (std::int64_t i = 0; i < n; ++i)
    for (int c = 0; c < components; ++c)
      if (!std::isfinite(data[4 * i + c])) return i;
  return -1;
}

template <typename T>
std::vector<std::int64_t> checked_bodies(std::int64_t n, std::uint64_t seed) {
  std::vector<std::int64_t> bodies;
  if (n <= kFullCheckMaxN) {
    for (std::int64_t i = 0; i < n; ++i) bodies.push_back(i);
    return bodies;
  }
  bodies = {0, n - 1};
  const std::int64_t sampled = std::clamp(kReferenceBudget / n, kMinSampled, kMaxSampled);
  std::uint64_t state = seed;
  for (std::int64_t s = 0; s < sampled; ++s)
    bodies.push_back(static_cast<std::int64_t>(splitmix64(state) % static_cast<std::uint64_t>(n)));
  return bodies;
}

}  // namespace

bool is_supported_precision(const std::string& p) { return p == "fp32" || p == "fp64"; }

double element_bytes(const std::string& p) {
  if (p == "fp32") return 4;
  if (p == "fp64") return 8;
  throw std::invalid_argument("nbody: unsupported precision " + p);
}

double tolerance(const std::string& p) {
  // fp32: each term is good to a few ulps of itself (the GPU's MUFU.RSQ to
  // 2^-22.9, cubed: <= 4e-7 of the metric even if all errors aligned), and
  // each rounding of the sum is at most an ulp of a partial sum, itself at
  // most the metric's denominator. The GPU kernel sums per tile (128 or 512
  // bodies, nbody_launch.hpp), then tiles; emulating 128-body tiles at
  // n = 262144 (4194304) gives errors up to 1.2e-6 (2.5e-6), where one plain
  // running sum would give 1e-5 (5e-4), and the H100 measured 5.4e-7 with
  // 512-body tiles at n = 262144. 2e-5 keeps a wide margin, while dropping
  // one 128-body tile at n = 262144 costs a random body 2e-4 (median; 90% of
  // bodies over 1e-4).
  // fp64: the same analysis at u = 2^-53, leaving a wide margin.
  if (p == "fp32") return 2e-5;
  if (p == "fp64") return 1e-12;
  throw std::invalid_argument("nbody: unsupported precision " + p);
}

Work step_work(const std::string& precision, std::int64_t n) {
  const double nn = static_cast<double>(n);
  const double flops_per_interaction = precision == "fp64" ? 30 : 20;
  // Positions and velocities (4 values each per body) read once and written once.
  const double bytes = 4.0 * 4.0 * nn * element_bytes(precision);
  return Work{flops_per_interaction * nn * nn, bytes, nn * nn, "interaction"};
}

template <typename T>
Bodies<T> make_bodies(std::int64_t n, std::uint64_t seed) {
  Bodies<T> b;
  b.n = n;
  b.pos.resize(static_cast<std::size_t>(4 * n));
  b.vel.resize(static_cast<std::size_t>(4 * n));
  std::uint64_t state = seed;
  const float inv_n = 1.0f / static_cast<float>(n);
  for (std::int64_t i = 0; i < n; ++i) {
    float x, y, z;
    do {  // rejection: uniform in the unit ball
      x = uniform_float(state, -1.0f, 1.0f);
      y = uniform_float(state, -1.0f, 1.0f);
      z = uniform_float(state, -1.0f, 1.0f);
    } while (x * x + y * y + z * z > 1.0f);
    const float mass = uniform_float(state, 0.5f, 1.5f) * inv_n;
    T* p = &b.pos[static_cast<std::size_t>(4 * i)];
    p[0] = x, p[1] = y, p[2] = z, p[3] = mass;
    T* v = &b.vel[static_cast<std::size_t>(4 * i)];
    for (int c = 0; c < 3; ++c) v[c] = uniform_float(state, -0.1f, 0.1f);
    v[3] = 0;
  }
  return b;
}

template <typename T>
void compute_accelerations(const T* pos, std::int64_t n, T* acc) {
  // Structure of arrays and kLanes independent partial sums per target: the
  // compiler vectorizes the lane loop without reassociating any one sum.
  constexpr int kLanes = 8;
  const T eps2 = static_cast<T>(kSoftening2);
  const auto count = static_cast<std::size_t>(n);
  std::vector<T> x(count), y(count), z(count), m(count);
  for (std::size_t j = 0; j < count; ++j) {
    x[j] = pos[4 * j], y[j] = pos[4 * j + 1], z[j] = pos[4 * j + 2], m[j] = pos[4 * j + 3];
  }
  for (std::size_t i = 0; i < count; ++i) {
    const T xi = x[i], yi = y[i], zi = z[i];
    T ax[kLanes] = {}, ay[kLanes] = {}, az[kLanes] = {};
    std::size_t j = 0;
    for (; j + kLanes <= count; j += kLanes) {
      for (int l = 0; l < kLanes; ++l) {
        interact(x[j + l] - xi, y[j + l] - yi, z[j + l] - zi, m[j + l], eps2, ax[l], ay[l], az[l]);
      }
    }
    for (; j < count; ++j) interact(x[j] - xi, y[j] - yi, z[j] - zi, m[j], eps2, ax[0], ay[0], az[0]);
    T sx = 0, sy = 0, sz = 0;
    for (int l = 0; l < kLanes; ++l) sx += ax[l], sy += ay[l], sz += az[l];
    acc[4 * i] = sx, acc[4 * i + 1] = sy, acc[4 * i + 2] = sz, acc[4 * i + 3] = 0;
  }
}

template <typename T>
void integrate(const T* pos_in, const T* vel_in, const T* acc, std::int64_t n, T* pos_out, T* vel_out) {
  const T dt = static_cast<T>(kTimeStep), damping = static_cast<T>(kDamping);
  for (std::int64_t k = 0; k < 4 * n; k += 4) {
    for (int c = 0; c < 3; ++c) {
      vel_out[k + c] = (vel_in[k + c] + acc[k + c] * dt) * damping;
      pos_out[k + c] = pos_in[k + c] + vel_out[k + c] * dt;
    }
    vel_out[k + 3] = vel_in[k + 3];
    pos_out[k + 3] = pos_in[k + 3];
  }
}

template <typename T>
Verification verify_step(const StepView<T>& s, std::uint64_t sample_seed) {
  const std::int64_t n = s.n;
  Verification v;
  v.tolerance = tolerance(sizeof(T) == 4 ? "fp32" : "fp64");
  auto fail = [&](const std::string& what) {
    v.ok = false;
    v.max_rel_error = INFINITY;
    v.detail = what;
    return v;
  };
  struct Array {
    const T* data;
    int components;
    const char* name;
  };
  for (const Array& a : {Array{s.pos_in, 4, "input position"}, Array{s.vel_in, 3, "input velocity"},
                         Array{s.acc, 3, "acceleration"}, Array{s.vel_out, 3, "velocity"},
                         Array{s.pos_out, 4, "position"}}) {
    const std::int64_t bad = first_non_finite(a.data, n, a.components);
    if (bad >= 0) return fail(std::string(a.name) + " of body " + std::to_string(bad) + " is not finite");
  }

  const double eps2 = static_cast<T>(kSoftening2);
  const double dt = static_cast<T>(kTimeStep), damping = static_cast<T>(kDamping);
  const double integration_tolerance = kIntegrationUlps * std::numeric_limits<T>::epsilon();
  const double tiny = std::numeric_limits<double>::min();
  const std::vector<std::int64_t> bodies = checked_bodies<T>(n, sample_seed);
  for (const std::int64_t i : bodies) {
    const T* pi = s.pos_in + 4 * i;
    double ref[3] = {0, 0, 0}, magnitude = 0;  // sum_j |term_j|
    for (std::int64_t j = 0; j < n; ++j) {
      if (j == i) continue;  // exactly 0 in any correct implementation
      const T* pj = s.pos_in + 4 * j;
      // Differences of floats (or of doubles at similar scale) are exact or nearly so in double.
      const double dx = double(pj[0]) - double(pi[0]), dy = double(pj[1]) - double(pi[1]),
                   dz = double(pj[2]) - double(pi[2]);
      const double d2 = dx * dx + dy * dy + dz * dz + eps2;
      const double inv = 1.0 / std::sqrt(d2);
      const double term = double(pj[3]) * inv * inv * inv;
      ref[0] += dx * term, ref[1] += dy * term, ref[2] += dz * term;
      magnitude += std::fabs(term) * norm3(dx, dy, dz);
    }
    const T* a = s.acc + 4 * i;
    const double diff = norm3(a[0] - ref[0], a[1] - ref[1], a[2] - ref[2]);
    const double err = magnitude > 0 ? diff / magnitude : (diff == 0 ? 0 : INFINITY);
    if (err > v.max_rel_error) {
      v.max_rel_error = err;
      if (err > v.tolerance) {
        std::ostringstream msg;
        msg << "acceleration of body " << i << " = (" << a[0] << ", " << a[1] << ", " << a[2]
            << "), float64 reference (" << ref[0] << ", " << ref[1] << ", " << ref[2] << ")";
        v.detail = msg.str();
      }
    }

    // Integration, from this body's own (already checked) acceleration.
    const T* vi = s.vel_in + 4 * i;
    const T* vo = s.vel_out + 4 * i;
    const T* po = s.pos_out + 4 * i;
    double dv[3], dp[3];
    for (int c = 0; c < 3; ++c) {
      dv[c] = double(vo[c]) - (double(vi[c]) + double(a[c]) * dt) * damping;
      dp[c] = double(po[c]) - (double(pi[c]) + double(vo[c]) * dt);
    }
    const double v_scale = (norm3(vi[0], vi[1], vi[2]) + norm3(a[0], a[1], a[2]) * dt) * damping;
    const double p_scale = norm3(pi[0], pi[1], pi[2]) + norm3(vo[0], vo[1], vo[2]) * dt;
    if (norm3(dv[0], dv[1], dv[2]) > integration_tolerance * std::max(v_scale, tiny) ||
        norm3(dp[0], dp[1], dp[2]) > integration_tolerance * std::max(p_scale, tiny) || po[3] != pi[3]) {
      std::ostringstream msg;
      msg << "body " << i << ": velocity (" << vo[0] << ", " << vo[1] << ", " << vo[2] << "), position (" << po[0]
          << ", " << po[1] << ", " << po[2] << ", mass " << po[3]
          << ") do not follow from its input state and acceleration";
      return fail(msg.str());
    }
  }
  v.checked = 10 * static_cast<std::int64_t>(bodies.size());
  v.ok = v.max_rel_error <= v.tolerance;
  if (v.ok) v.detail.clear();
  return v;
}

template Bodies<float> make_bodies<float>(std::int64_t, std::uint64_t);
template Bodies<double> make_bodies<double>(std::int64_t, std::uint64_t);
template void compute_accelerations<float>(const float*, std::int64_t, float*);
template void compute_accelerations<double>(const double*, std::int64_t, double*);
template void integrate<float>(const float*, const float*, const float*, std::int64_t, float*, float*);
template void integrate<double>(const double*, const double*, const double*, std::int64_t, double*, double*);
template Verification verify_step<float>(const StepView<float>&, std::uint64_t);
template Verification verify_step<double>(const StepView<double>&, std::uint64_t);

namespace {

// --device cpu: one thread, the same step as the GPU (all-pairs forces in the
// requested precision, then the integration), ping-ponging two states so the
// last step's inputs survive for verify().
template <typename T>
class NbodyCpu final : public Workload {
 public:
  explicit NbodyCpu(const WorkloadArgs& args) : precision_(args.precision), n_(args.size) {}

  void setup(std::uint64_t seed) override {
    seed_ = seed;
    Bodies<T> b = make_bodies<T>(n_, seed);
    const auto count = static_cast<std::size_t>(4 * n_);
    pos_[0] = std::move(b.pos);
    vel_[0] = std::move(b.vel);
    // Poison: what no step wrote cannot pass verification.
    pos_[1].assign(count, NAN);
    vel_[1].assign(count, NAN);
    acc_.assign(count, NAN);
    in_ = 0;
  }
  void run() override {
    const int out = in_ ^ 1;
    compute_accelerations(pos_[in_].data(), n_, acc_.data());
    integrate(pos_[in_].data(), vel_[in_].data(), acc_.data(), n_, pos_[out].data(), vel_[out].data());
    in_ = out;
  }
  void sync() override {}
  Work work() const override { return step_work(precision_, n_); }
  Verification verify() override {
    const int last_in = in_ ^ 1;  // before any run(): the poisoned state, which fails
    StepView<T> view;
    view.n = n_;
    view.pos_in = pos_[last_in].data();
    view.vel_in = vel_[last_in].data();
    view.acc = acc_.data();
    view.pos_out = pos_[in_].data();
    view.vel_out = vel_[in_].data();
    return verify_step(view, seed_ + 1);
  }

 private:
  std::string precision_;
  std::int64_t n_;
  std::uint64_t seed_ = 0;
  std::vector<T> pos_[2], vel_[2], acc_;
  int in_ = 0;  // index of the state the next step reads
};

}  // namespace

std::unique_ptr<Workload> make_cpu_workload(const WorkloadArgs& args) {
  if (args.precision == "fp64") return std::make_unique<NbodyCpu<double>>(args);
  if (args.precision == "fp32") return std::make_unique<NbodyCpu<float>>(args);
  throw std::invalid_argument("nbody: unsupported precision " + args.precision);
}

}  // namespace mpsb::nbody
