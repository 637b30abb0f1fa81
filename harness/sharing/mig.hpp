// MIG (Multi-Instance GPU): which physical GPUs have MIG mode on and which
// MIG devices (GPU instance + compute instance) they hold, read through NVML
// (opened with dlopen, as nvml_library.hpp explains). mpsbench only reads: it
// never changes MIG settings.
//
// A MIG device is a GPU of its own to CUDA: CUDA_VISIBLE_DEVICES=MIG-<uuid>
// makes it device 0, with its own SM count and memory, which device.cpp reads
// from the runtime. The runtime gives its UUID as 16 bytes without saying
// whether they name a GPU or a MIG device; the snapshot tells (cuda_uuid_text).
//
// Tests inject a snapshot: MPSBENCH_FAKE_MIG names a JSON file
//   {"gpus": [{"uuid": "GPU-...", "mig_mode": "enabled",
//              "instances": [{"uuid": "MIG-...", "gpu_instance_id": 1,
//                             "sm_count": 14, "memory_total_bytes": 10468982784}]}]}
// ("mig_mode": "enabled", "disabled" or "unsupported"; "problem": "..." for a
// failed read).
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace mpsb {

struct MigInstance {
  std::string uuid;                                 // "MIG-..."
  std::optional<int> gpu_instance_id;               // nvmlDeviceGetGpuInstanceId
  std::optional<int> sm_count;                      // nvmlDeviceGetAttributes: multiprocessorCount
  std::optional<std::uint64_t> memory_total_bytes;  // nvmlDeviceGetMemoryInfo
  bool operator==(const MigInstance& o) const {
    return uuid == o.uuid && gpu_instance_id == o.gpu_instance_id && sm_count == o.sm_count &&
           memory_total_bytes == o.memory_total_bytes;
  }
};

struct PhysicalGpu {
  std::string uuid;      // "GPU-..."
  std::string mig_mode;  // "enabled", "disabled", "unsupported"
  std::vector<MigInstance> instances;  // empty unless enabled
};

struct MigSnapshot {
  std::vector<PhysicalGpu> gpus;
  std::string problem;  // why NVML could not be read; empty when fine
};

// Reads the snapshot; the NVML implementation lives in mig.cpp, tests inject fakes.
class MigProbe {
 public:
  virtual ~MigProbe() = default;
  virtual MigSnapshot snapshot() const = 0;
};
// MPSBENCH_FAKE_MIG's file when set, else NVML.
std::unique_ptr<MigProbe> mig_probe_from_environment();
// mig_probe_from_environment()->snapshot(). Never throws: trouble ends up in problem.
MigSnapshot read_mig_snapshot();
// The injected form: the JSON above (throws std::exception when malformed).
MigSnapshot parse_mig_snapshot(const std::string& json_text);

// What a results file records for one CUDA device (context.gpus[].mig).
struct MigRecord {
  std::string mode;         // of the physical GPU: "enabled", "disabled", "unsupported"
  std::string parent_uuid;  // the physical GPU's UUID
  bool is_instance = false; // the CUDA device is one of `instances`
  std::vector<MigInstance> instances;  // every MIG device of the physical GPU
  bool operator==(const MigRecord& o) const {
    return mode == o.mode && parent_uuid == o.parent_uuid && is_instance == o.is_instance && instances == o.instances;
  }
};

// "GPU-<hex>" or, when the snapshot lists a MIG device with these bytes,
// "MIG-<hex>"; `hex` is the runtime's UUID as 8-4-4-4-12 lower-case hex.
std::string cuda_uuid_text(const std::string& hex, const MigSnapshot& snapshot);
// The record for a CUDA device of UUID `uuid` ("GPU-..." or "MIG-..."):
// none when the snapshot does not know it (NVML unreadable, or another host's GPU).
std::optional<MigRecord> mig_record_for(const std::string& uuid, const MigSnapshot& snapshot);

}  // namespace mpsb
