#include "measure/plan.hpp"

#include <algorithm>
#include <cstdio>

#include "registry.hpp"
#include "runtime/usage_error.hpp"

namespace mpsb {

std::vector<int> default_rank_counts(int max_ranks_per_device) {
  std::vector<int> counts;
  for (int k = 1; k < max_ranks_per_device; k *= 2) counts.push_back(k);
  if (max_ranks_per_device >= 1) counts.push_back(max_ranks_per_device);
  return counts;
}

namespace {

KernelParams params_of(const KernelInfo& k, const PlanRequest& request) {
  KernelParams params;
  for (const auto& p : k.params) params[p.name] = p.default_value;
  if (const auto it = request.kernel_params.find(k.name); it != request.kernel_params.end()) {
    for (const auto& [name, value] : it->second) params[name] = value;
  }
  return params;
}

// Each tenant alone at its ranks, each at the mix's total (the tenant sharing
// with itself), then the mix; repeats dropped.
std::vector<Config> mix_plan(const PlanRequest& request, DeviceKind device, int max_ranks_per_device) {
  std::vector<Tenant> tenants = request.mix_tenants;
  int total = 0;
  for (auto& t : tenants) {
    const KernelInfo& k = *find_kernel(t.kernel);
    if (t.precision.empty()) t.precision = k.default_precisions.front();
    if (t.size == 0) {
      const auto& sizes = device == DeviceKind::gpu ? k.default_gpu_sizes : k.default_cpu_sizes;
      t.size = sizes[sizes.size() / 2];
    }
    t.params = params_of(k, request);
    total += t.ranks_per_gpu;
  }
  if (total > max_ranks_per_device) {
    throw UsageError("--mix: " + request.mix + " needs " + std::to_string(total) + " active ranks per " +
                     (device == DeviceKind::gpu ? "GPU" : "host") + ", but only " +
                     std::to_string(max_ranks_per_device) + " exist");
  }
  std::vector<Config> plan;
  auto add = [&](Config c) {
    if (std::find(plan.begin(), plan.end(), c) == plan.end()) plan.push_back(std::move(c));
  };
  for (const auto& t : tenants) add(Config{t.kernel, t.precision, t.size, t.ranks_per_gpu, t.params, {}});
  for (const auto& t : tenants) add(Config{t.kernel, t.precision, t.size, total, t.params, {}});
  add(Config{kMixKernel, mix_name(tenants), 0, total, {}, tenants});
  return plan;
}

}  // namespace

std::string mix_name(const std::vector<Tenant>& tenants) {
  std::string name;
  for (const auto& t : tenants) {
    name += (name.empty() ? "" : ",") + t.kernel + "/" + t.precision + "/" + std::to_string(t.size) + ":" +
            std::to_string(t.ranks_per_gpu);
  }
  return name;
}

int tenant_of_slot(const Config& config, int slot) {
  int first = 0;
  for (std::size_t i = 0; i < config.tenants.size(); ++i) {
    first += config.tenants[i].ranks_per_gpu;
    if (slot < first) return static_cast<int>(i);
  }
  return 0;
}

Config config_of_slot(const Config& config, int slot) {
  if (!config.is_mix()) return config;
  const Tenant& t = config.tenants[static_cast<std::size_t>(tenant_of_slot(config, slot))];
  return Config{t.kernel, t.precision, t.size, t.ranks_per_gpu, t.params, {}};
}

std::vector<Config> build_plan(const PlanRequest& request, SharingMode mode, DeviceKind device,
                               int max_ranks_per_device, int device_count) {
  if (!request.mix_tenants.empty()) return mix_plan(request, device, max_ranks_per_device);
  std::vector<int> rank_counts = request.ranks_per_gpu;
  const bool streams = runs_instances_in_one_rank(mode);  // streams or green
  for (int k : rank_counts) {
    if (streams && k > kMaxStreamInstances) {
      throw UsageError("--ranks-per-gpu: " + std::to_string(k) + " instances per GPU in --mode " +
                       to_string(mode) + "; at most " + std::to_string(kMaxStreamInstances));
    }
    if (!streams && k > max_ranks_per_device) {
      throw UsageError("--ranks-per-gpu: " + std::to_string(k) + " active ranks per " +
                       (device == DeviceKind::gpu ? "GPU" : "host") + " requested, but only " +
                       std::to_string(max_ranks_per_device) + " exist (" + std::to_string(device_count) + " " +
                       (device == DeviceKind::gpu ? "GPU(s)" : "host(s)") + ")");
    }
  }
  if (rank_counts.empty()) rank_counts = default_rank_counts(max_ranks_per_device);
  std::sort(rank_counts.begin(), rank_counts.end());
  rank_counts.erase(std::unique(rank_counts.begin(), rank_counts.end()), rank_counts.end());

  std::vector<const KernelInfo*> kernels;
  if (request.kernels.empty()) {
    for (const auto& k : kernel_registry()) kernels.push_back(&k);
  } else {
    for (const auto& name : request.kernels) {
      const KernelInfo* k = find_kernel(name);
      if (std::find(kernels.begin(), kernels.end(), k) == kernels.end()) kernels.push_back(k);
    }
  }

  std::vector<Config> plan;
  for (const KernelInfo* k : kernels) {
    std::vector<std::string> precisions;
    if (request.all_precisions) {
      precisions = k->precisions;
    } else if (request.precisions.empty()) {
      precisions = k->default_precisions;
    } else {
      for (const auto& p : request.precisions) {
        if (std::find(k->precisions.begin(), k->precisions.end(), p) != k->precisions.end()) {
          precisions.push_back(p);
        }
      }
    }
    std::vector<std::int64_t> sizes;
    if (const auto it = request.kernel_sizes.find(k->name); it != request.kernel_sizes.end()) {
      sizes = it->second;
    } else if (!request.sizes.empty()) {
      sizes = request.sizes;
    } else {
      sizes = device == DeviceKind::gpu ? k->default_gpu_sizes : k->default_cpu_sizes;
    }
    for (const auto& p : precisions) {
      for (auto size : sizes) {
        for (int ranks : rank_counts) plan.push_back(Config{k->name, p, size, ranks, params_of(*k, request), {}});
      }
    }
  }
  return plan;
}

std::string format_bytes(double bytes) {
  char text[32];
  if (bytes >= 1024.0 * 1024 * 1024) {
    std::snprintf(text, sizeof text, "%.2f GiB", bytes / (1024.0 * 1024 * 1024));
  } else {
    std::snprintf(text, sizeof text, "%.1f MiB", bytes / (1024.0 * 1024));
  }
  return text;
}

}  // namespace mpsb
