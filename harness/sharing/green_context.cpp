#include "sharing/green_context.hpp"

#include <algorithm>
#include <string>

#include "runtime/check.hpp"

#if __has_include(<cuda.h>)
#include <cuda.h>
#endif

#if defined(CUDA_VERSION) && CUDA_VERSION >= 12040
#define MPSB_HAVE_GREEN_CONTEXTS 1
#endif

namespace mpsb {

SmGranularity split_granularity(SmGranularity reported, int compute_capability_major) {
  SmGranularity documented{1, 1};
  if (compute_capability_major >= 9) {
    documented = {8, 8};
  } else if (compute_capability_major == 8) {
    documented = {4, 2};
  } else if (compute_capability_major >= 6) {
    documented = {2, 2};
  }
  return SmGranularity{std::max(reported.min_partition, documented.min_partition),
                       std::max(reported.alignment, documented.alignment)};
}

int green_partition_sm_count(int sms, int instances, SmGranularity granularity) {
  if (sms < 1 || instances < 1) return 0;
  if (instances == 1) return sms;
  const int alignment = std::max(1, granularity.alignment);
  const int share = sms / instances / alignment * alignment;
  return share >= std::max(1, granularity.min_partition) ? share : 0;
}

std::vector<int> green_split_attempts(int sms, int instances, SmGranularity granularity) {
  std::vector<int> counts;
  if (instances < 2) return counts;
  const int alignment = std::max(1, granularity.alignment);
  for (int count = green_partition_sm_count(sms, instances, granularity);
       count >= std::max(1, granularity.min_partition); count -= alignment) {
    counts.push_back(count);
  }
  return counts;
}

#ifdef MPSB_HAVE_GREEN_CONTEXTS

namespace {

// Where green contexts begin; every entry point below is requested at this ABI.
constexpr unsigned int kGreenContextsCudaVersion = 12040;

// The driver calls this file makes, found at run time (see the header).
struct DriverApi {
  decltype(&::cuGetErrorName) cuGetErrorName = nullptr;
  decltype(&::cuGetErrorString) cuGetErrorString = nullptr;
  decltype(&::cuDeviceGet) cuDeviceGet = nullptr;
  decltype(&::cuCtxGetCurrent) cuCtxGetCurrent = nullptr;
  decltype(&::cuCtxSetCurrent) cuCtxSetCurrent = nullptr;
  decltype(&::cuDeviceGetDevResource) cuDeviceGetDevResource = nullptr;
  decltype(&::cuDevSmResourceSplitByCount) cuDevSmResourceSplitByCount = nullptr;
  decltype(&::cuDevResourceGenerateDesc) cuDevResourceGenerateDesc = nullptr;
  decltype(&::cuGreenCtxCreate) cuGreenCtxCreate = nullptr;
  decltype(&::cuGreenCtxDestroy) cuGreenCtxDestroy = nullptr;
  decltype(&::cuCtxFromGreenCtx) cuCtxFromGreenCtx = nullptr;
  decltype(&::cuGreenCtxGetDevResource) cuGreenCtxGetDevResource = nullptr;
  decltype(&::cuStreamGetGreenCtx) cuStreamGetGreenCtx = nullptr;
  std::string problem;  // the first entry point that could not be found, and why
};

std::string driver_cuda_version() {
  int version = 0;
  if (cudaDriverGetVersion(&version) != cudaSuccess || version == 0) {
    static_cast<void>(cudaGetLastError());
    return "no NVIDIA driver";
  }
  return "the driver supports CUDA " + std::to_string(version / 1000) + "." + std::to_string(version % 1000 / 10);
}

template <typename F>
void load(const char* name, F& function, std::string& problem) {
  if (!problem.empty()) return;
  void* address = nullptr;
  cudaDriverEntryPointQueryResult found = cudaDriverEntryPointSymbolNotFound;
#if CUDART_VERSION >= 12050
  const char* lookup = "cudaGetDriverEntryPointByVersion";
  const cudaError_t status =
      cudaGetDriverEntryPointByVersion(name, &address, kGreenContextsCudaVersion, cudaEnableDefault, &found);
#else
  const char* lookup = "cudaGetDriverEntryPoint";
  const cudaError_t status = cudaGetDriverEntryPoint(name, &address, cudaEnableDefault, &found);
#endif
  if (status != cudaSuccess) {
    problem = std::string(lookup) + "(\"" + name + "\") failed: " + cudaGetErrorString(status) + " [" +
              cudaGetErrorName(status) + "] (" + driver_cuda_version() + ")";
    static_cast<void>(cudaGetLastError());
  } else if (found != cudaDriverEntryPointSuccess || address == nullptr) {
    problem = std::string(name) + ": not provided by this NVIDIA driver (" + driver_cuda_version() +
              "; green contexts need 12.4 or newer)";
  } else {
    function = reinterpret_cast<F>(address);
  }
}

DriverApi load_driver_api() {
  DriverApi d;
  load("cuGetErrorName", d.cuGetErrorName, d.problem);
  load("cuGetErrorString", d.cuGetErrorString, d.problem);
  load("cuDeviceGet", d.cuDeviceGet, d.problem);
  load("cuCtxGetCurrent", d.cuCtxGetCurrent, d.problem);
  load("cuCtxSetCurrent", d.cuCtxSetCurrent, d.problem);
  load("cuDeviceGetDevResource", d.cuDeviceGetDevResource, d.problem);
  load("cuDevSmResourceSplitByCount", d.cuDevSmResourceSplitByCount, d.problem);
  load("cuDevResourceGenerateDesc", d.cuDevResourceGenerateDesc, d.problem);
  load("cuGreenCtxCreate", d.cuGreenCtxCreate, d.problem);
  load("cuGreenCtxDestroy", d.cuGreenCtxDestroy, d.problem);
  load("cuCtxFromGreenCtx", d.cuCtxFromGreenCtx, d.problem);
  load("cuGreenCtxGetDevResource", d.cuGreenCtxGetDevResource, d.problem);
  load("cuStreamGetGreenCtx", d.cuStreamGetGreenCtx, d.problem);
  return d;
}

// Looked up once per process (a thread-safe static).
const DriverApi& loaded_driver_api() {
  static const DriverApi api = load_driver_api();
  return api;
}

// The same, throwing FatalError when this driver lacks any of the calls.
const DriverApi& driver_api() {
  const DriverApi& api = loaded_driver_api();
  if (!api.problem.empty()) throw FatalError(error_identity() + ": " + api.problem);
  return api;
}

void check_cu(CUresult status, const char* call, const char* file, int line) {
  if (status == CUDA_SUCCESS) return;
  const DriverApi& d = driver_api();
  const char* name = nullptr;
  const char* text = nullptr;
  if (d.cuGetErrorName(status, &name) != CUDA_SUCCESS || name == nullptr) name = "unknown CUresult";
  if (d.cuGetErrorString(status, &text) != CUDA_SUCCESS || text == nullptr) text = "unknown error";
  const std::string error = std::string(text) + " [" + name + " " + std::to_string(static_cast<int>(status)) + "]";
  if (status == CUDA_ERROR_OUT_OF_MEMORY) throw_out_of_memory(call, error, file, line);
  throw_fatal(call, error, file, line);
}

}  // namespace

// A checked driver call through the entry points above; a failure names the
// call as written: MPSB_CU(cuGreenCtxCreate, &ctx, desc, device, flags).
#define MPSB_CU(function, ...) \
  check_cu(driver_api().function(__VA_ARGS__), #function "(" #__VA_ARGS__ ")", __FILE__, __LINE__)

struct GreenPartition::Groups {
  int gpu = -1;
  CUdevice device = 0;
  SmGranularity granularity;           // split_granularity of the device
  CUdevResource whole{};               // the GPU's SMs
  std::vector<CUdevResource> groups;   // one per instance, disjoint
};

GreenPartition::GreenPartition(int gpu_ordinal, int instances) : groups_(std::make_unique<Groups>()) {
  Groups& g = *groups_;
  g.gpu = gpu_ordinal;
  if (instances < 1) throw FatalError(error_identity() + ": green partition of " + std::to_string(instances));
  MPSB_CU(cuDeviceGet, &g.device, gpu_ordinal);
  MPSB_CU(cuDeviceGetDevResource, g.device, &g.whole, CU_DEV_RESOURCE_TYPE_SM);
  int major = 0;
  MPSB_CUDA(cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, gpu_ordinal));
  g.granularity = split_granularity(SmGranularity{static_cast<int>(g.whole.sm.minSmPartitionSize),
                                                  static_cast<int>(g.whole.sm.smCoscheduledAlignment)},
                                    major);
  if (instances == 1) {  // the whole GPU, as mps-qos at 100 percent
    g.groups.push_back(g.whole);
    return;
  }
  const int sms = static_cast<int>(g.whole.sm.smCount);
  const SmGranularity grain = granularity();
  unsigned int most = 0;
  int most_at = 0;
  for (const int count : green_split_attempts(sms, instances, grain)) {
    std::vector<CUdevResource> result(static_cast<std::size_t>(instances));
    auto made = static_cast<unsigned int>(instances);
    MPSB_CU(cuDevSmResourceSplitByCount, result.data(), &made, &g.whole, nullptr, 0u,
            static_cast<unsigned int>(count));
    if (made >= static_cast<unsigned int>(instances)) {
      g.groups = std::move(result);
      return;
    }
    if (made > most) {
      most = made;
      most_at = count;
    }
  }
  std::string why = "cuDevSmResourceSplitByCount: cannot split the " + std::to_string(sms) + " SMs of GPU " +
                    std::to_string(gpu_ordinal) + " into " + std::to_string(instances) +
                    " disjoint partitions (the driver's minimum partition is " + std::to_string(grain.min_partition) +
                    " SMs, in steps of " + std::to_string(grain.alignment) + ")";
  if (most > 0) {
    why += "; at most " + std::to_string(most) + " partitions of " + std::to_string(most_at) + " or more SMs";
  }
  throw FatalError(error_identity() + ": " + why);
}

GreenPartition::~GreenPartition() = default;

int GreenPartition::instances() const { return static_cast<int>(groups_->groups.size()); }

int GreenPartition::device_sm_count() const { return static_cast<int>(groups_->whole.sm.smCount); }

int GreenPartition::group_sm_count(int instance) const {
  return static_cast<int>(groups_->groups.at(static_cast<std::size_t>(instance)).sm.smCount);
}

SmGranularity GreenPartition::granularity() const { return groups_->granularity; }

GreenContext::GreenContext(const GreenPartition& partition, int instance) {
  const GreenPartition::Groups& g = *partition.groups_;
  CUdevResource resource = g.groups.at(static_cast<std::size_t>(instance));  // the call takes a mutable pointer
  CUdevResourceDesc desc = nullptr;
  MPSB_CU(cuDevResourceGenerateDesc, &desc, &resource, 1u);
  CUgreenCtx green = nullptr;
  MPSB_CU(cuGreenCtxCreate, &green, desc, g.device, static_cast<unsigned int>(CU_GREEN_CTX_DEFAULT_STREAM));
  green_ = green;
  try {
    CUdevResource held{};
    MPSB_CU(cuGreenCtxGetDevResource, green, &held, CU_DEV_RESOURCE_TYPE_SM);
    sm_count_ = static_cast<int>(held.sm.smCount);
    CUcontext previous = nullptr, converted = nullptr;
    MPSB_CU(cuCtxGetCurrent, &previous);
    MPSB_CU(cuCtxFromGreenCtx, &converted, green);
    MPSB_CU(cuCtxSetCurrent, converted);
    previous_ = previous;
  } catch (...) {
    static_cast<void>(driver_api().cuGreenCtxDestroy(green));
    throw;
  }
}

GreenContext::~GreenContext() {
  // The constructor succeeded, so every entry point was found.
  const DriverApi& d = loaded_driver_api();
  static_cast<void>(d.cuCtxSetCurrent(previous_));
  static_cast<void>(d.cuGreenCtxDestroy(green_));
}

bool GreenContext::holds_stream(cudaStream_t stream) const {
  CUgreenCtx owner = nullptr;
  MPSB_CU(cuStreamGetGreenCtx, stream, &owner);  // cudaStream_t is a CUstream
  return owner == green_;
}

#else  // a toolkit without green contexts: the mode fails when used

namespace {
[[noreturn]] void no_green_contexts() {
  throw FatalError(error_identity() + ": cuGreenCtxCreate: this mpsbench was built with a CUDA toolkit older than "
                   "12.4, which has no green contexts");
}
}  // namespace

struct GreenPartition::Groups {};
GreenPartition::GreenPartition(int, int) { no_green_contexts(); }
GreenPartition::~GreenPartition() = default;
int GreenPartition::instances() const { return 0; }
int GreenPartition::device_sm_count() const { return 0; }
int GreenPartition::group_sm_count(int) const { return 0; }
SmGranularity GreenPartition::granularity() const { return {}; }
GreenContext::GreenContext(const GreenPartition&, int) { no_green_contexts(); }
GreenContext::~GreenContext() = default;
bool GreenContext::holds_stream(cudaStream_t) const { return false; }

#endif

}  // namespace mpsb
