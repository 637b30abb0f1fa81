// libnvidia-ml.so.1, opened at run time rather than linked (CUDA::nvml): it
// ships with the driver, not the toolkit, so a binary linked against it would
// not even start on a CPU-only machine or in CI, where mpsbench must still run
// (--device cpu) and be tested. The clock sampler (measure/gpu_clocks.cpp) and the MIG
// probe (mig.cpp) each resolve the entry points they need from it.
#pragma once

#include <dlfcn.h>

#include <string>

namespace mpsb::nvml_library {

// The library, or nullptr with `problem` saying why. Never closed, and
// nvmlShutdown never called: samplers may exist until the process ends and
// NVML's own teardown at exit suffices; dlopen and nvmlInit count references,
// so each user may open it.
inline void* open(std::string& problem) {
  void* library = dlopen("libnvidia-ml.so.1", RTLD_NOW | RTLD_LOCAL);
  if (library == nullptr) {
    const char* why = dlerror();
    problem = std::string("NVML not loaded: ") + (why ? why : "dlopen(libnvidia-ml.so.1) failed");
  }
  return library;
}

// `out` = the entry point `name`; false where this driver's NVML lacks it.
template <typename F>
bool resolve(void* library, const char* name, F& out) {
  out = reinterpret_cast<F>(dlsym(library, name));
  return out != nullptr;
}

}  // namespace mpsb::nvml_library
