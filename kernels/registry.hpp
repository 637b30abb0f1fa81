// Kernels register themselves (MPSB_REGISTER_KERNEL in their own file), so
// adding a kernel never edits a shared list: its source files plus one line in
// kernels/CMakeLists.txt. The kernels are an OBJECT library, so the linker
// keeps every registration.
#pragma once

#include <string>
#include <vector>

#include "workload.hpp"

namespace mpsb {

// All registered kernels in suite order.
const std::vector<KernelInfo>& kernel_registry();
// nullptr when no kernel has that name.
const KernelInfo* find_kernel(const std::string& name);

namespace detail {
bool register_kernel(KernelInfo info);
}

}  // namespace mpsb

#define MPSB_REGISTER_KERNEL(info_function) \
  static const bool mpsb_registered_##info_function = ::mpsb::detail::register_kernel(info_function())
