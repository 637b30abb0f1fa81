#include "measure/host_memory.hpp"

#include <fstream>
#include <sstream>

#include "registry.hpp"
#include "runtime/usage_error.hpp"
#include "sharing/mps_servers.hpp"

namespace mpsb {

std::optional<std::uint64_t> mem_available_bytes(const std::string& meminfo_text) {
  std::istringstream in(meminfo_text);
  std::string line;
  while (std::getline(in, line)) {
    if (line.rfind("MemAvailable:", 0) != 0) continue;
    std::istringstream fields(line.substr(13));
    unsigned long long kib = 0;
    std::string unit;
    if (!(fields >> kib >> unit) || unit != "kB") return std::nullopt;
    return static_cast<std::uint64_t>(kib) * 1024u;
  }
  return std::nullopt;
}

double host_bytes_per_instance(const Config& c) {
  const KernelInfo* k = find_kernel(c.kernel);
  return k == nullptr ? 0.0 : 2.0 * k->device_bytes(c.precision, c.size, c.params);
}

double host_bytes_per_host(const Config& c) {
  if (!c.is_mix()) return c.ranks_per_gpu * host_bytes_per_instance(c);
  double total = 0;
  for (const auto& t : c.tenants) {
    total += t.ranks_per_gpu * host_bytes_per_instance(Config{t.kernel, t.precision, t.size, 1, t.params, {}});
  }
  return total;
}

std::string host_memory_refusal(const std::vector<Config>& plan, const std::string& host, std::uint64_t available) {
  for (const auto& c : plan) {
    const double needed = host_bytes_per_host(c);
    if (needed <= static_cast<double>(available)) continue;
    const std::string what = c.is_mix() ? "the mix " + c.precision
                                        : c.kernel + " " + c.precision + " size " + std::to_string(c.size);
    return "--device cpu: " + what + " with " + std::to_string(c.ranks_per_gpu) + " instance(s) per host needs " +
           "about " + format_bytes(needed) + " of host memory, but host " + host + " has " +
           format_bytes(static_cast<double>(available)) + " available (MemAvailable)";
  }
  return "";
}

void check_host_memory(const MpiContext& ctx, const std::vector<Config>& plan) {
  std::string mine;  // "BYTES", on the first rank of each host that could read it
  if (ctx.local_rank == 0) {
    std::ifstream in(proc_root_from_environment() + "/meminfo");
    std::ostringstream text;
    text << in.rdbuf();
    if (const auto available = mem_available_bytes(text.str())) mine = std::to_string(*available);
  }
  const auto available = allgather_strings(ctx.world, mine);
  const auto hosts = allgather_strings(ctx.world, ctx.host);
  for (int r = 0; r < ctx.size; ++r) {
    if (available[static_cast<std::size_t>(r)].empty()) continue;
    const std::string refusal =
        host_memory_refusal(plan, hosts[static_cast<std::size_t>(r)], std::stoull(available[static_cast<std::size_t>(r)]));
    if (!refusal.empty()) throw UsageError(refusal);
  }
}

}  // namespace mpsb
