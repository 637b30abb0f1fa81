#include "sharing/sharing_state.hpp"

#include <cstdlib>

#include "runtime/usage_error.hpp"

namespace mpsb {

SharingMode parse_sharing_mode(const std::string& text) {
  if (text == "auto") return SharingMode::automatic;
  if (text == "timeslice") return SharingMode::timeslice;
  if (text == "mps") return SharingMode::mps;
  if (text == "mps-qos") return SharingMode::mps_qos;
  if (text == "streams") return SharingMode::streams;
  if (text == "green") return SharingMode::green;
  throw UsageError("--mode: unknown mode '" + text + "' (choose auto, timeslice, mps, mps-qos, streams or green)");
}

const char* to_string(SharingMode mode) {
  switch (mode) {
    case SharingMode::timeslice: return "timeslice";
    case SharingMode::mps: return "mps";
    case SharingMode::mps_qos: return "mps-qos";
    case SharingMode::streams: return "streams";
    case SharingMode::green: return "green";
    default: return "auto";
  }
}

bool runs_instances_in_one_rank(SharingMode mode) {
  return mode == SharingMode::streams || mode == SharingMode::green;
}

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
  const std::string flag = std::string("--mode ") + to_string(mode) + ": ";
  for (const auto& r : ranks) {
    const std::string who = "rank " + std::to_string(r.rank) + " on " + r.host;
    const auto& s = r.state;
    switch (mode) {
      case SharingMode::timeslice:
        if (s.mps_enabled) {
          throw UsageError(flag + who + " is an MPS client (CU_DEVICE_ATTRIBUTE_MPS_ENABLED=1); stop the MPS " +
                           "daemon or choose --mode mps");
        }
        break;
      case SharingMode::mps:
      case SharingMode::mps_qos:
        if (!s.mps_enabled) {
          throw UsageError(flag + who + " is not an MPS client (CU_DEVICE_ATTRIBUTE_MPS_ENABLED=0): no MPS " +
                           "control daemon answered on its CUDA_MPS_PIPE_DIRECTORY");
        }
        if (mode == SharingMode::mps && s.active_thread_percentage && *s.active_thread_percentage < 100) {
          throw UsageError(flag + who + " runs with CUDA_MPS_ACTIVE_THREAD_PERCENTAGE=" +
                           std::to_string(*s.active_thread_percentage) + "; use --mode mps-qos");
        }
        if (mode == SharingMode::mps_qos && !s.active_thread_percentage) {
          throw UsageError(flag + who + " has no CUDA_MPS_ACTIVE_THREAD_PERCENTAGE set");
        }
        break;
      case SharingMode::green:
        // An MPS client's kernels may spread beyond its green context's SMs
        // (CUDA driver API, Green Contexts): the partitions would not hold.
        if (s.mps_enabled) {
          throw UsageError(flag + who + " is an MPS client (CU_DEVICE_ATTRIBUTE_MPS_ENABLED=1); green contexts " +
                           "partition the SMs of one process without MPS: stop the MPS daemon");
        }
        break;
      default:
        break;  // automatic records what it finds; streams shares inside one process
    }
  }
}

std::string effective_mode(SharingMode requested, const std::vector<SharingState>& active) {
  if (requested != SharingMode::automatic) return to_string(requested);
  std::size_t clients = 0, limited = 0;
  for (const auto& s : active) {
    clients += s.mps_enabled ? 1 : 0;
    limited += s.mps_enabled && s.active_thread_percentage && *s.active_thread_percentage < 100 ? 1 : 0;
  }
  if (clients == 0) return "timeslice";
  if (clients != active.size()) return "mixed";
  return limited == 0 ? "mps" : "mps-qos";
}

}  // namespace mpsb
