// The host-memory preflight of the CPU device (issue 25): the GPU path refuses
// a size that cannot fit in the GPU's free memory (preflight.hpp), but on the
// CPU a configuration too large for the host was started anyway, and the OOM
// killer ended a rank a minute later. Before any work, every host's
// MemAvailable (/proc/meminfo; MPSBENCH_PROC_ROOT/meminfo in tests) is held
// against what each configuration's instances on that host need together.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "measure/plan.hpp"
#include "runtime/mpi_context.hpp"

namespace mpsb {

// MemAvailable of `meminfo_text` in bytes; nullopt when the line is missing or malformed.
std::optional<std::uint64_t> mem_available_bytes(const std::string& meminfo_text);

// Host memory one instance of `c` needs (a tenant's own configuration for a mix's): twice its device
// footprint (KernelInfo::device_bytes), for the CPU implementations keep their inputs beside the buffers
// the GPU ones hold on the device. An estimate meant to catch sizes far beyond the host, not the last GiB.
double host_bytes_per_instance(const Config& c);
// All instances of one configuration on one host: its ranks per host times that, summed over a mix's tenants.
double host_bytes_per_host(const Config& c);

// The first configuration of `plan` that cannot fit in `available` bytes on host `host`: its one-line
// refusal, else "". Pure, for the tests.
std::string host_memory_refusal(const std::vector<Config>& plan, const std::string& host, std::uint64_t available);

// Collective over ctx.world, on the CPU device: the first rank of every host reads its MemAvailable; every
// rank gets every host's and throws the same UsageError when a configuration cannot fit on some host.
// A host whose meminfo cannot be read is not checked.
void check_host_memory(const MpiContext& ctx, const std::vector<Config>& plan);

}  // namespace mpsb
