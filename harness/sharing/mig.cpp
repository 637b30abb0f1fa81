#include "sharing/mig.hpp"

#include "sharing/nvml_library.hpp"

#include <cctype>
#include <cstdlib>
#include <fstream>
#include <sstream>

#include <nlohmann/json.hpp>

#if __has_include(<nvml.h>)
#include <nvml.h>
#define MPSB_HAVE_NVML_H 1
#endif

namespace mpsb {
namespace {

// The NVML ABI this file uses, declared here (the toolkit may lack nvml.h:
// measure/gpu_clocks.cpp) and checked against the header wherever it exists. Every
// call is read-only; nothing here changes a MIG setting.
using NvmlReturn = int;
struct NvmlDeviceOpaque;
using NvmlDevice = NvmlDeviceOpaque*;
struct NvmlMemory {
  unsigned long long total, free, used;
};
struct NvmlAttributes {
  unsigned int multiprocessorCount, sharedCopyEngineCount, sharedDecoderCount, sharedEncoderCount, sharedJpegCount,
      sharedOfaCount, gpuInstanceSliceCount, computeInstanceSliceCount;
  unsigned long long memorySizeMB;
};
constexpr NvmlReturn kSuccess = 0;
constexpr NvmlReturn kNotSupported = 3;
constexpr unsigned kMigEnabled = 1;
constexpr unsigned kUuidBuffer = 96;  // NVML_DEVICE_UUID_V2_BUFFER_SIZE

#ifdef MPSB_HAVE_NVML_H
static_assert(NVML_SUCCESS == kSuccess && NVML_ERROR_NOT_SUPPORTED == kNotSupported &&
                  NVML_DEVICE_MIG_ENABLE == kMigEnabled && NVML_DEVICE_UUID_V2_BUFFER_SIZE == kUuidBuffer,
              "nvml.h disagrees with mig.cpp's declarations");
static_assert(sizeof(nvmlMemory_t) == sizeof(NvmlMemory) && sizeof(nvmlDeviceAttributes_t) == sizeof(NvmlAttributes),
              "nvml.h structures differ from mig.cpp's declarations");
#endif

struct Nvml {
  NvmlReturn (*init)() = nullptr;
  NvmlReturn (*count)(unsigned*) = nullptr;
  NvmlReturn (*handle_by_index)(unsigned, NvmlDevice*) = nullptr;
  NvmlReturn (*uuid)(NvmlDevice, char*, unsigned) = nullptr;
  NvmlReturn (*mig_mode)(NvmlDevice, unsigned*, unsigned*) = nullptr;
  NvmlReturn (*max_mig_count)(NvmlDevice, unsigned*) = nullptr;
  NvmlReturn (*mig_by_index)(NvmlDevice, unsigned, NvmlDevice*) = nullptr;
  NvmlReturn (*gpu_instance_id)(NvmlDevice, unsigned*) = nullptr;  // optional
  NvmlReturn (*attributes)(NvmlDevice, NvmlAttributes*) = nullptr;  // optional
  NvmlReturn (*memory)(NvmlDevice, NvmlMemory*) = nullptr;          // optional
  const char* (*error_string)(NvmlReturn) = nullptr;
  bool mig_functions = false;  // the MIG calls exist (drivers from R450 on)
  std::string problem;

  std::string error(NvmlReturn status) const {
    const char* text = error_string ? error_string(status) : nullptr;
    return (text ? std::string(text) : std::string("NVML error")) + " (" + std::to_string(status) + ")";
  }
};

using nvml_library::resolve;

Nvml load_nvml() {
  Nvml api;
  void* library = nvml_library::open(api.problem);  // nvml_library.hpp: never closed
  if (library == nullptr) return api;
  resolve(library, "nvmlErrorString", api.error_string);
  if (!resolve(library, "nvmlInit_v2", api.init) || !resolve(library, "nvmlDeviceGetCount_v2", api.count) ||
      !resolve(library, "nvmlDeviceGetHandleByIndex_v2", api.handle_by_index) ||
      !resolve(library, "nvmlDeviceGetUUID", api.uuid)) {
    api.problem = "NVML too old: libnvidia-ml.so.1 lacks a function mpsbench uses";
    return api;
  }
  api.mig_functions = resolve(library, "nvmlDeviceGetMigMode", api.mig_mode) &&
                      resolve(library, "nvmlDeviceGetMaxMigDeviceCount", api.max_mig_count) &&
                      resolve(library, "nvmlDeviceGetMigDeviceHandleByIndex", api.mig_by_index);
  resolve(library, "nvmlDeviceGetGpuInstanceId", api.gpu_instance_id);
  if (!resolve(library, "nvmlDeviceGetAttributes_v2", api.attributes)) {
    resolve(library, "nvmlDeviceGetAttributes", api.attributes);
  }
  resolve(library, "nvmlDeviceGetMemoryInfo", api.memory);
  if (const NvmlReturn status = api.init(); status != kSuccess) api.problem = "nvmlInit_v2 failed: " + api.error(status);
  return api;
}

const Nvml& nvml() {
  static const Nvml api = load_nvml();
  return api;
}

std::string uuid_of(const Nvml& api, NvmlDevice device) {
  char text[kUuidBuffer] = {};
  if (api.uuid(device, text, kUuidBuffer) != kSuccess) return "";
  return text;
}

MigInstance read_instance(const Nvml& api, NvmlDevice mig) {
  MigInstance instance;
  instance.uuid = uuid_of(api, mig);
  unsigned id = 0;
  if (api.gpu_instance_id && api.gpu_instance_id(mig, &id) == kSuccess) instance.gpu_instance_id = static_cast<int>(id);
  NvmlAttributes attributes{};
  const bool have_attributes = api.attributes && api.attributes(mig, &attributes) == kSuccess;
  if (have_attributes && attributes.multiprocessorCount > 0) {
    instance.sm_count = static_cast<int>(attributes.multiprocessorCount);
  }
  NvmlMemory memory{};
  if (api.memory && api.memory(mig, &memory) == kSuccess && memory.total > 0) {
    instance.memory_total_bytes = memory.total;
  } else if (have_attributes && attributes.memorySizeMB > 0) {
    instance.memory_total_bytes = attributes.memorySizeMB << 20;
  }
  return instance;
}

class NvmlMigProbe final : public MigProbe {
 public:
  MigSnapshot snapshot() const override {
    MigSnapshot snap;
    const Nvml& api = nvml();
    if (!api.problem.empty()) {
      snap.problem = api.problem;
      return snap;
    }
    unsigned count = 0;
    if (const NvmlReturn status = api.count(&count); status != kSuccess) {
      snap.problem = "nvmlDeviceGetCount_v2 failed: " + api.error(status);
      return snap;
    }
    for (unsigned i = 0; i < count; ++i) {
      NvmlDevice device = nullptr;
      if (api.handle_by_index(i, &device) != kSuccess) continue;  // e.g. a GPU we may not access
      PhysicalGpu gpu;
      gpu.uuid = uuid_of(api, device);
      if (gpu.uuid.empty()) continue;
      unsigned current = 0, pending = 0;
      const NvmlReturn mode = api.mig_functions ? api.mig_mode(device, &current, &pending) : kNotSupported;
      if (mode == kNotSupported) {
        gpu.mig_mode = "unsupported";
      } else if (mode != kSuccess) {
        continue;  // unknown: no record rather than a wrong one
      } else {
        gpu.mig_mode = current == kMigEnabled ? "enabled" : "disabled";
      }
      unsigned slots = 0;
      if (gpu.mig_mode == "enabled" && api.max_mig_count(device, &slots) == kSuccess) {
        for (unsigned s = 0; s < slots; ++s) {
          NvmlDevice mig = nullptr;
          if (api.mig_by_index(device, s, &mig) != kSuccess) continue;  // NOT_FOUND: an empty slot
          MigInstance instance = read_instance(api, mig);
          if (!instance.uuid.empty()) gpu.instances.push_back(instance);
        }
      }
      snap.gpus.push_back(gpu);
    }
    return snap;
  }
};

class FileMigProbe final : public MigProbe {
 public:
  explicit FileMigProbe(std::string path) : path_(std::move(path)) {}
  MigSnapshot snapshot() const override {
    std::ifstream in(path_);
    if (!in) return MigSnapshot{{}, "MPSBENCH_FAKE_MIG: cannot read '" + path_ + "'"};
    std::stringstream text;
    text << in.rdbuf();
    try {
      return parse_mig_snapshot(text.str());
    } catch (const std::exception& e) {
      return MigSnapshot{{}, "MPSBENCH_FAKE_MIG: '" + path_ + "': " + e.what()};
    }
  }

 private:
  std::string path_;
};

std::string lower(std::string text) {
  for (auto& c : text) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return text;
}

// The hex part of "GPU-<hex>" or "MIG-<hex>", lower case; the text itself otherwise.
std::string hex_of(const std::string& uuid) {
  if (uuid.size() > 4 && (uuid.rfind("GPU-", 0) == 0 || uuid.rfind("MIG-", 0) == 0)) return lower(uuid.substr(4));
  return lower(uuid);
}

std::optional<int> optional_int(const nlohmann::json& j, const char* key) {
  if (!j.contains(key) || j.at(key).is_null()) return std::nullopt;
  return j.at(key).get<int>();
}

}  // namespace

MigSnapshot parse_mig_snapshot(const std::string& json_text) {
  const auto j = nlohmann::json::parse(json_text);
  MigSnapshot snap;
  if (j.contains("problem")) snap.problem = j.at("problem").get<std::string>();
  for (const auto& g : j.value("gpus", nlohmann::json::array())) {
    PhysicalGpu gpu;
    gpu.uuid = g.at("uuid").get<std::string>();
    gpu.mig_mode = g.at("mig_mode").get<std::string>();
    if (gpu.mig_mode != "enabled" && gpu.mig_mode != "disabled" && gpu.mig_mode != "unsupported") {
      throw std::invalid_argument("mig_mode '" + gpu.mig_mode + "' is not enabled, disabled or unsupported");
    }
    for (const auto& m : g.value("instances", nlohmann::json::array())) {
      MigInstance instance;
      instance.uuid = m.at("uuid").get<std::string>();
      instance.gpu_instance_id = optional_int(m, "gpu_instance_id");
      instance.sm_count = optional_int(m, "sm_count");
      if (m.contains("memory_total_bytes") && !m.at("memory_total_bytes").is_null()) {
        instance.memory_total_bytes = m.at("memory_total_bytes").get<std::uint64_t>();
      }
      gpu.instances.push_back(instance);
    }
    snap.gpus.push_back(gpu);
  }
  return snap;
}

std::unique_ptr<MigProbe> mig_probe_from_environment() {
  if (const char* path = std::getenv("MPSBENCH_FAKE_MIG"); path != nullptr && *path != '\0') {
    return std::make_unique<FileMigProbe>(path);
  }
  return std::make_unique<NvmlMigProbe>();
}

MigSnapshot read_mig_snapshot() { return mig_probe_from_environment()->snapshot(); }

std::string cuda_uuid_text(const std::string& hex, const MigSnapshot& snapshot) {
  const std::string wanted = lower(hex);
  for (const auto& gpu : snapshot.gpus) {
    for (const auto& instance : gpu.instances) {
      if (instance.uuid.rfind("MIG-", 0) == 0 && hex_of(instance.uuid) == wanted) return "MIG-" + wanted;
    }
  }
  return "GPU-" + wanted;
}

std::optional<MigRecord> mig_record_for(const std::string& uuid, const MigSnapshot& snapshot) {
  const std::string wanted = hex_of(uuid);
  for (const auto& gpu : snapshot.gpus) {
    bool instance = false;
    for (const auto& m : gpu.instances) instance = instance || hex_of(m.uuid) == wanted;
    if (!instance && hex_of(gpu.uuid) != wanted) continue;
    return MigRecord{gpu.mig_mode, gpu.uuid, instance, gpu.instances};
  }
  return std::nullopt;
}

}  // namespace mpsb
