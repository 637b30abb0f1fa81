#include "telemetry/fake_counters.hpp"

#include <chrono>
#include <cmath>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <stdexcept>
#include <thread>

#include <nlohmann/json.hpp>

#include "runtime/steady_clock.hpp"

namespace mpsb {
namespace {

// What a fake failure says, as NVML's error string would.
std::string fake_failure(const std::string& call, const std::string& kind) {
  if (kind == "not_supported") return call + ": Not Supported (3)";
  if (kind == "no_permission") return call + ": Insufficient Permissions (4)";
  return call + ": " + kind;
}

class FakeGpmSample final : public GpmSample {};

class FakeCounters final : public GpuCounters {
 public:
  explicit FakeCounters(FakeGpu gpu) : gpu_(std::move(gpu)) {
    if (gpu_.energy != "ok") energy_problem_ = fake_failure("nvmlDeviceGetTotalEnergyConsumption", gpu_.energy);
    if (gpu_.gpm != "ok") gpm_problem_ = fake_failure("nvmlGpmSampleGet", gpu_.gpm);
  }
  const std::string& uuid() const override { return gpu_.uuid; }
  std::optional<double> max_sm_clock_mhz(std::string&) override {
    wait();
    return gpu_.max_sm_clock_mhz;
  }
  bool sm_clock_mhz(unsigned& mhz) override {
    wait();
    mhz = static_cast<unsigned>(gpu_.sm_clock_mhz);
    return true;
  }
  bool event_reasons(std::uint64_t& bits) override {
    wait();
    bits = gpu_.event_reasons;
    return true;
  }
  const std::string& energy_problem() const override { return energy_problem_; }
  bool energy_mj(std::uint64_t& mj) override {
    if (!energy_problem_.empty()) return false;
    // The value is read at some instant of the call, as NVML's: here its middle.
    wait(0.5);
    mj = gpu_.energy_mj_at(now_seconds());
    wait(0.5);
    return true;
  }
  const std::string& gpm_problem() const override { return gpm_problem_; }
  std::unique_ptr<GpmSample> gpm_sample(std::string& why) override {
    if (!gpm_problem_.empty()) {
      why = gpm_problem_;
      return nullptr;
    }
    wait();
    auto sample = std::make_unique<FakeGpmSample>();
    sample->time_s = now_seconds();
    return sample;
  }

 protected:
  GpmFigures read_gpm_figures(const GpmSample&, const GpmSample&, std::string&) override { return gpu_.figures; }

 private:
  void wait(double fraction = 1.0) const {
    if (gpu_.call_s > 0) std::this_thread::sleep_for(std::chrono::duration<double>(fraction * gpu_.call_s));
  }
  FakeGpu gpu_;
  std::string energy_problem_, gpm_problem_;
};

double number_or(const nlohmann::json& j, const char* key, double fallback) {
  if (!j.contains(key)) return fallback;
  if (!j.at(key).is_number()) throw std::invalid_argument(std::string("\"") + key + "\" is not a number");
  return j.at(key).get<double>();
}

// A number that is cast or slept on must be in range (a cast out of range is undefined); `whole`: an integer.
double bounded_or(const nlohmann::json& j, const char* key, double fallback, double low, double high,
                  bool whole = false) {
  const double v = number_or(j, key, fallback);
  if (!(v >= low && v <= high) || (whole && v != std::floor(v))) {
    throw std::invalid_argument(std::string("\"") + key + "\" must be " + (whole ? "an integer " : "") + "in [" +
                                std::to_string(low) + ", " + std::to_string(high) + "]");
  }
  return v;
}

// "ok", or one of the failures a fake may script.
std::string support_of(const nlohmann::json& value, const char* key) {
  const std::string text = value.get<std::string>();
  if (text != "ok" && text != "not_supported" && text != "no_permission") {
    throw std::invalid_argument(std::string("\"") + key + "\": '" + text +
                                "' (choose ok, not_supported or no_permission)");
  }
  return text;
}

}  // namespace

std::uint64_t FakeGpu::energy_mj_at(double t) const {
  const auto per_tick = static_cast<std::uint64_t>(std::llround(power_w * tick_s * 1000.0));
  const auto ticks = static_cast<std::uint64_t>(std::floor(t / tick_s));
  return 1'000'000'000ull + ticks * per_tick;
}

FakeNvml parse_fake_nvml(const std::string& json_text) {
  const auto j = nlohmann::json::parse(json_text);
  FakeNvml fake;
  int position = 0;
  for (const auto& g : j.at("gpus")) {
    FakeGpu gpu;
    gpu.uuid = g.at("uuid").get<std::string>();
    gpu.index = static_cast<int>(bounded_or(g, "index", position++, 0, 65535, true));
    // power_w may be far above any GPU's: a test scripts a broken counter so.
    gpu.power_w = bounded_or(g, "power_w", gpu.power_w, 0, 1e9);
    gpu.tick_s = bounded_or(g, "tick_s", gpu.tick_s, 0.001, 100);
    if (!(gpu.tick_s > 0) || !(gpu.power_w >= 0)) throw std::invalid_argument("tick_s must be > 0, power_w >= 0");
    if (g.contains("energy")) gpu.energy = support_of(g.at("energy"), "energy");
    gpu.sm_clock_mhz = bounded_or(g, "sm_clock_mhz", gpu.sm_clock_mhz, 0, 1e6);
    gpu.max_sm_clock_mhz = bounded_or(g, "max_sm_clock_mhz", gpu.max_sm_clock_mhz, 0, 1e6);
    gpu.event_reasons = static_cast<std::uint64_t>(bounded_or(g, "event_reasons", 0, 0, 9007199254740992.0, true));
    if (g.contains("gpm")) {
      const auto& gpm = g.at("gpm");
      if (gpm.is_string()) {
        gpu.gpm = support_of(gpm, "gpm");
      } else {
        gpu.figures = GpmFigures{number_or(gpm, "sm_active", *gpu.figures.sm_active),
                                 number_or(gpm, "sm_occupancy", *gpu.figures.sm_occupancy),
                                 number_or(gpm, "dram_bw", *gpu.figures.dram_bw),
                                 number_or(gpm, "tensor_active", *gpu.figures.tensor_active)};
      }
    }
    gpu.call_s = bounded_or(g, "call_s", 0, 0, 10);
    fake.gpus.push_back(std::move(gpu));
  }
  if (j.contains("cpu_device_as")) fake.cpu_device_as = j.at("cpu_device_as").get<std::string>();
  return fake;
}

const FakeNvmlFile& fake_nvml_from_environment() {
  static const FakeNvmlFile file = [] {
    FakeNvmlFile f;
    const char* path = std::getenv("MPSBENCH_FAKE_NVML");
    if (path == nullptr || *path == '\0') return f;
    f.set = true;
    std::ifstream in(path);
    if (!in) {
      f.problem = std::string("MPSBENCH_FAKE_NVML: cannot read '") + path + "'";
      return f;
    }
    std::ostringstream text;
    text << in.rdbuf();
    try {
      f.fake = parse_fake_nvml(text.str());
    } catch (const std::exception& e) {
      f.problem = std::string("MPSBENCH_FAKE_NVML: '") + path + "': " + e.what();
    }
    return f;
  }();
  return file;
}

std::unique_ptr<GpuCounters> make_fake_counters(const FakeGpu& gpu) { return std::make_unique<FakeCounters>(gpu); }

}  // namespace mpsb
