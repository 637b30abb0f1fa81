// CUDA_MPS_PINNED_DEVICE_MEM_LIMIT: the device memory an MPS client may
// allocate, per device, as `<device>=<value>[,<device>=<value>...]` where a
// device is a CUDA device ordinal or a UUID (GPU-..., MIG-...; a prefix, as in
// CUDA_VISIBLE_DEVICES) and a value a whole number of bytes with an optional
// K, M, G or T (binary: 1G = 2^30 bytes; "512MB" and "1GiB" are accepted too),
// e.g. "0=1G,1=512M". The variable binds only an MPS client; a limit set by the
// control daemon (set_default_device_pinned_mem_limit) binds too, the lower of
// the two winning, and is not visible here.
//
// Under a limit cudaMemGetInfo reports the client's headroom as free memory
// (at most the limit) while the total stays the GPU's, so the check that the
// limit is in force compares free memory with it.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace mpsb {

inline constexpr const char* kPinnedMemLimitVariable = "CUDA_MPS_PINNED_DEVICE_MEM_LIMIT";

struct PinnedMemLimit {
  std::string device;  // "0", or a UUID or UUID prefix ("GPU-8932f937", "MIG-...")
  std::uint64_t bytes = 0;
};

// Throws UsageError naming the variable and the malformed item.
std::vector<PinnedMemLimit> parse_pinned_mem_limits(const std::string& text);

// The limit for the CUDA device `index` whose UUID is `uuid`: the first item
// naming it by ordinal or by (a prefix of) its UUID; none when no item does.
std::optional<std::uint64_t> pinned_mem_limit_for(const std::vector<PinnedMemLimit>& limits, int index,
                                                  const std::string& uuid);

// The limit that applies to this rank: none unless it is an MPS client and
// the variable (`text`, unset: nullopt) names its device.
std::optional<std::uint64_t> applicable_pinned_mem_limit(const std::optional<std::string>& text, bool mps_client,
                                                         int index, const std::string& uuid);

// "2.00 GiB"
std::string format_gib(std::uint64_t bytes);

struct RankMemoryLimit {
  int rank = 0;
  std::string host;
  int gpu_index = -1;
  std::optional<std::uint64_t> limit_bytes;
  std::uint64_t memory_free_bytes = 0;  // cudaMemGetInfo's free once the rank's context exists
};
// Throws UsageError naming the first rank whose free memory clearly exceeds
// (by more than 1 %) the limit it asked for: the limit is not in force.
void verify_pinned_mem_limits(const std::vector<RankMemoryLimit>& ranks);

}  // namespace mpsb
