#include "sharing/sharing_state.hpp"

#include <cstdlib>

#include "runtime/usage_error.hpp"

namespace mpsb {

SharingState read_sharing_state(const MpsProbe& probe, int device) {
  SharingState s;
  s.mps_enabled = probe.mps_enabled(device);
  s.sm_count = probe.sm_count(device);
  if (const auto value = probe.environment("CUDA_MPS_ACTIVE_THREAD_PERCENTAGE")) {
    char* end = nullptr;
    const long p = std::strtol(value->c_str(), &end, 10);
    if (!value->empty() && *end == '\0' && p >= 1 && p <= 100) {
      s.active_thread_percentage = static_cast<int>(p);
    } else {
      throw UsageError("CUDA_MPS_ACTIVE_THREAD_PERCENTAGE='" + *value + "' is not a percentage in [1, 100]");
    }
  }
  return s;
}

void verify_sharing_state(SharingMode mode, const std::vector<RankSharing>& ranks) {
  const SharingModeInfo& m = mode_info(mode);
  const std::string flag = std::string("--mode ") + m.name + ": ";
  for (const auto& r : ranks) {
    const std::string who = "rank " + std::to_string(r.rank) + " on " + r.host;
    const auto& s = r.state;
    if (m.mps_client == Expect::no && s.mps_enabled) {
      throw UsageError(flag + who + " is an MPS client (CU_DEVICE_ATTRIBUTE_MPS_ENABLED=1); " + m.hint);
    }
    if (m.mps_client == Expect::yes && !s.mps_enabled) {
      throw UsageError(flag + who + " is not an MPS client (CU_DEVICE_ATTRIBUTE_MPS_ENABLED=0): no MPS " +
                       "control daemon answered on its CUDA_MPS_PIPE_DIRECTORY");
    }
    if (m.thread_percentage == Expect::no && s.active_thread_percentage && *s.active_thread_percentage < 100) {
      throw UsageError(flag + who + " runs with CUDA_MPS_ACTIVE_THREAD_PERCENTAGE=" +
                       std::to_string(*s.active_thread_percentage) + "; " + m.hint);
    }
    if (m.thread_percentage == Expect::yes && !s.active_thread_percentage) {
      throw UsageError(flag + who + " has no CUDA_MPS_ACTIVE_THREAD_PERCENTAGE set");
    }
  }
}

std::string effective_mode(SharingMode requested, const std::vector<SharingState>& active) {
  if (!mode_info(requested).recorded_as_found) return to_string(requested);
  std::size_t clients = 0, limited = 0;
  for (const auto& s : active) {
    clients += s.mps_enabled ? 1 : 0;
    limited += s.mps_enabled && s.active_thread_percentage && *s.active_thread_percentage < 100 ? 1 : 0;
  }
  if (clients == 0) return to_string(SharingMode::timeslice);
  if (clients != active.size()) return "mixed";
  return to_string(limited == 0 ? SharingMode::mps : SharingMode::mps_qos);
}

}  // namespace mpsb
