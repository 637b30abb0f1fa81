// The sharing state each rank actually got, and the check that it matches
// the requested mode (sharing/mode_table.hpp). CUDA silently runs without MPS
// when no daemon can be reached, so a result is only recorded under a mode
// its ranks verified.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "sharing/mode_table.hpp"

namespace mpsb {

// What one rank's context reports.
struct SharingState {
  bool mps_enabled = false;                     // CU_DEVICE_ATTRIBUTE_MPS_ENABLED
  int sm_count = 0;                             // cudaDevAttrMultiProcessorCount as this client sees it
  std::optional<int> active_thread_percentage;  // CUDA_MPS_ACTIVE_THREAD_PERCENTAGE of this process
};

// Reads a rank's state; the CUDA implementation lives in device.cpp, tests
// inject fakes.
class MpsProbe {
 public:
  virtual ~MpsProbe() = default;
  virtual bool mps_enabled(int device) const = 0;
  virtual int sm_count(int device) const = 0;
  virtual std::optional<std::string> environment(const char* name) const = 0;
};
SharingState read_sharing_state(const MpsProbe& probe, int device);

struct RankSharing {
  int rank = 0;
  std::string host;
  SharingState state;
};
// Throws UsageError naming the first rank whose state contradicts what
// `mode`'s row expects (its mps_client and thread_percentage).
void verify_sharing_state(SharingMode mode, const std::vector<RankSharing>& ranks);
// The mode a set of active ranks ran under: the requested one, or for a mode
// recorded as found (auto) the one their states show ("timeslice", "mps",
// "mps-qos", "mixed").
std::string effective_mode(SharingMode requested, const std::vector<SharingState>& active);

}  // namespace mpsb
