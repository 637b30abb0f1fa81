#include "registry.hpp"

#include <algorithm>
#include <stdexcept>

namespace mpsb {
namespace {
std::vector<KernelInfo>& mutable_registry() {
  static std::vector<KernelInfo> kernels;  // function-local: safe during static init
  return kernels;
}
}  // namespace

namespace detail {
bool register_kernel(KernelInfo info) {
  auto& kernels = mutable_registry();
  if (find_kernel(info.name) != nullptr) {
    throw std::logic_error("kernel registered twice: " + info.name);
  }
  kernels.push_back(std::move(info));
  std::stable_sort(kernels.begin(), kernels.end(), [](const KernelInfo& a, const KernelInfo& b) {
    return a.suite_order < b.suite_order;
  });
  return true;
}
}  // namespace detail

const std::vector<KernelInfo>& kernel_registry() { return mutable_registry(); }

const KernelInfo* find_kernel(const std::string& name) {
  for (const auto& k : mutable_registry()) {
    if (k.name == name) return &k;
  }
  return nullptr;
}

}  // namespace mpsb
