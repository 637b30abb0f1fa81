// Rank-to-device placement: local rank r on a host with G usable GPUs uses
// GPU r mod G. With --device cpu each host is one shared "device". A rank's
// slot is its position among the ranks sharing its device; the first k slots
// of every device are the active ranks of a "k ranks per GPU" configuration.
#pragma once

#include <string>
#include <vector>

#include "sharing/device.hpp"
#include "workload.hpp"

namespace mpsb {

struct RankPlacement {
  int rank = 0;
  std::string host;
  int local_rank = 0;
  GpuInfo gpu;             // index -1 and empty fields on the CPU device
  std::string device_key;  // identifies the shared device across the job
  int slot = 0;            // filled in by build_placement
};

struct Placement {
  DeviceKind kind = DeviceKind::cpu;
  std::vector<RankPlacement> ranks;  // indexed by world rank
  int device_count = 0;
  int max_ranks_per_device = 0;      // fewest ranks on any device: the largest even sweep point
  bool uneven = false;               // some device has more ranks than max_ranks_per_device

  bool is_active(int rank, int ranks_per_device) const { return ranks[rank].slot < ranks_per_device; }
  int active_count(int ranks_per_device) const;
  // One entry per distinct GPU (empty on the CPU device).
  std::vector<const RankPlacement*> distinct_gpus() const;
};

// This rank's entry before slots are known.
RankPlacement describe_rank(int rank, const std::string& host, int local_rank, DeviceKind kind,
                            const GpuInfo& gpu);
std::string serialize(const RankPlacement& rank);
RankPlacement deserialize_rank(const std::string& text);
// Assigns slots (in world-rank order within each device) and counts.
Placement build_placement(DeviceKind kind, std::vector<RankPlacement> ranks);

}  // namespace mpsb
