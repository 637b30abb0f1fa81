// How the ranks share a GPU (--mode) and the check that the state each rank
// actually got matches it. CUDA silently runs without MPS when no daemon can
// be reached, so a result is only recorded under a mode its ranks verified.
#pragma once

#include <optional>
#include <string>
#include <vector>

namespace mpsb {

enum class SharingMode { automatic, timeslice, mps, mps_qos, streams, green };

// streams and green: the first rank of each GPU runs the k instances of a
// configuration on k threads of one process (green: each in its own CUDA green
// context holding 1/k of the SMs); the other modes run one instance per rank.
bool runs_instances_in_one_rank(SharingMode mode);

SharingMode parse_sharing_mode(const std::string& text);  // throws UsageError
const char* to_string(SharingMode mode);

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
// Throws UsageError naming the first rank whose state contradicts `mode`.
void verify_sharing_state(SharingMode mode, const std::vector<RankSharing>& ranks);
// The mode a set of active ranks ran under: the requested one, or for
// automatic the one their states show ("timeslice", "mps", "mps-qos", "mixed").
std::string effective_mode(SharingMode requested, const std::vector<SharingState>& active);

}  // namespace mpsb
