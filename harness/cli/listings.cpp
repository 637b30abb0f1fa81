#include "cli/listings.hpp"

#include "cli/presets.hpp"
#include "registry.hpp"
#include "runtime/build_info.hpp"
#include "sharing/mode_table.hpp"

namespace mpsb {
namespace {

void print_kernels(std::ostream& out) {
  for (const auto& k : kernel_registry()) {
    out << k.name << ": " << k.summary << "\n  precisions:";
    for (const auto& p : k.precisions) out << " " << p;
    out << "\n  default sizes (gpu):";
    for (auto s : k.default_gpu_sizes) out << " " << s;
    out << "\n  default sizes (cpu):";
    for (auto s : k.default_cpu_sizes) out << " " << s;
    out << "\n";
    for (const auto& p : k.params) {
      out << "  --param " << k.name << "." << p.name << "=N: " << p.doc << " (default " << p.default_value
          << ", " << p.min << ".." << p.max << ")\n";
    }
    if (k.per_iteration_latency) out << "  latency: every iteration is a request, timed (p50/p95/p99)\n";
  }
}

void print_presets(std::ostream& out) {
  for (const auto& p : list_presets(preset_directory())) {
    out << p.name << ": " << p.description << "\n ";
    for (const auto& a : p.args) out << " " << a;
    out << "\n";
  }
}

}  // namespace

void print_listings(std::ostream& out, const Options& options) {
  if (options.show_help) out << usage_text();
  if (options.show_version) {
    out << "mpsbench " << build_version() << " (git " << build_git_commit() << (build_git_dirty() ? ", modified" : "")
        << ")\n";
  }
  if (options.list_kernels) print_kernels(out);
  if (options.list_presets) print_presets(out);
  if (options.list_modes) out << mode_listing();
}

}  // namespace mpsb
