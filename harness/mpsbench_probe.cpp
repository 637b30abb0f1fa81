// mpsbench-probe: what a CUDA context sees in this process's environment, as
// one line of JSON. mpsbench-sweep --app runs it once per GPU in exactly the
// environment the copies of a farmed application get (their
// CUDA_VISIBLE_DEVICES, CUDA_MPS_PIPE_DIRECTORY, thread percentage), because
// the application itself cannot report whether its context became an MPS
// client; run without a restriction it lists the GPUs a node shows (the
// caller's own CUDA_VISIBLE_DEVICES holds).
//
// Prints {"tool", "host", "version", "git_commit", "git_dirty", "cuda":
// {driver_version, runtime_version, cublas_version}, "gpus": [one entry per
// visible device, each opened in turn: index, name, uuid, sm_count,
// memory_total_bytes, memory_free_bytes, compute_mode, sm_clock_peak_khz,
// mps_enabled, mps_active_thread_percentage], "problem"}: always that one
// line, whatever went wrong after the options were read. Exit status: 0 (no
// usable GPU is a `problem`, not an error: the caller decides), 2 an unknown
// option (one stderr line, no JSON) or a malformed
// CUDA_MPS_ACTIVE_THREAD_PERCENTAGE (JSON, checked before any device is
// touched), 3 a device could not be opened (an MPS daemon refusing the
// client, say): the JSON lists the devices read before it and names it.
// Limits: no MPI (it is no rank: nothing here may reach MPI_Abort); contexts
// stay open until exit, one per device.
#include <unistd.h>

#include <cstdlib>
#include <iostream>
#include <optional>
#include <string>

#include <nlohmann/json.hpp>

#include "runtime/build_info.hpp"
#include "runtime/check.hpp"
#include "runtime/values.hpp"
#include "sharing/device.hpp"
#include "sharing/sharing_state.hpp"

namespace {

using ojson = nlohmann::ordered_json;

constexpr int kExitUsage = 2;

const char* const kHelp =
    "usage: mpsbench-probe [--version]\n"
    "\n"
    "Prints one line of JSON: what a CUDA context sees in this process's environment\n"
    "for every visible device (name, UUID, SM count, memory, compute mode, whether the\n"
    "context is an MPS client, its CUDA_MPS_ACTIVE_THREAD_PERCENTAGE), the CUDA\n"
    "versions, and a `problem` when no device is usable. mpsbench-sweep --app runs it\n"
    "in the environment of a farmed application's copies to verify the sharing mode,\n"
    "since the application cannot say whether its context became an MPS client.\n"
    "CUDA_VISIBLE_DEVICES is honoured.\n"
    "\n"
    "Exit status: 0 (also when no GPU is usable: see `problem`), 2 an unknown option\n"
    "or a malformed CUDA_MPS_ACTIVE_THREAD_PERCENTAGE, 3 a device could not be opened.\n";

std::string host_name() {
  char name[256] = {};
  if (gethostname(name, sizeof name - 1) != 0) return "?";
  return name;
}

std::optional<std::string> environment(const char* name) {
  const char* value = std::getenv(name);
  if (value == nullptr) return std::nullopt;
  return std::string(value);
}

// read_sharing_state's check of CUDA_MPS_ACTIVE_THREAD_PERCENTAGE without a
// device, as mpsbench does before any rank opens one: a malformed value is bad
// input whether or not a GPU is there.
class EnvironmentOnlyProbe final : public mpsb::MpsProbe {
 public:
  bool mps_enabled(int) const override { return false; }
  int sm_count(int) const override { return 0; }
  std::optional<std::string> environment(const char* name) const override { return ::environment(name); }
};

// cuda_check.hpp's messages start with "rank R on host H: ", written for MPI
// ranks; the probe is no rank and its JSON names the host already.
std::string without_rank_identity(const std::string& message) {
  const std::string prefix = mpsb::error_identity() + ": ";
  return message.rfind(prefix, 0) == 0 ? message.substr(prefix.size()) : message;
}

// "CUDA device 1 (CUDA_VISIBLE_DEVICES=GPU-...)": the index alone is
// ambiguous once the caller restricts what CUDA shows.
std::string device_name(int index) {
  std::string name = "CUDA device " + std::to_string(index);
  if (const auto visible = environment("CUDA_VISIBLE_DEVICES")) name += " (CUDA_VISIBLE_DEVICES=" + *visible + ")";
  return name;
}

ojson gpu_json(const mpsb::GpuInfo& g) {
  ojson percentage = nullptr;
  if (g.mps_active_thread_percentage) percentage = *g.mps_active_thread_percentage;
  return {{"index", g.index},
          {"name", g.name},
          {"uuid", g.uuid},
          {"sm_count", g.sm_count},
          {"memory_total_bytes", g.memory_total_bytes},
          {"memory_free_bytes", g.memory_free_bytes},
          {"compute_mode", g.compute_mode},
          {"sm_clock_peak_khz", g.sm_clock_peak_khz},
          {"mps_enabled", g.mps_enabled},
          {"mps_active_thread_percentage", percentage}};
}

// Fills doc's gpus and problem; returns the exit status.
int probe_into(ojson& doc) {
  try {
    mpsb::read_sharing_state(EnvironmentOnlyProbe(), 0);
  } catch (const mpsb::UsageError& e) {
    doc["problem"] = e.what();
    return kExitUsage;
  }
  const mpsb::GpuProbe found = mpsb::probe_gpus({});
  doc["problem"] = found.problem;
  for (int index : found.usable) {
    try {
      doc["gpus"].push_back(gpu_json(mpsb::open_gpu(index)));
    } catch (const mpsb::UsageError& e) {
      doc["problem"] = device_name(index) + ": " + e.what();
      return kExitUsage;
    } catch (const std::exception& e) {  // mpsb::FatalError from a checked CUDA call, std::bad_alloc
      doc["problem"] = device_name(index) + ": " + without_rank_identity(e.what());
      return mpsb::kExitFatal;
    }
  }
  return 0;
}

int probe() {
  const mpsb::CudaVersions versions = mpsb::cuda_versions();
  ojson doc = {{"tool", "mpsbench-probe"},
               {"host", host_name()},
               {"version", mpsb::build_version()},
               {"git_commit", mpsb::build_git_commit()},
               {"git_dirty", mpsb::build_git_dirty()},
               {"cuda",
                {{"driver_version", mpsb::format_cuda_version(versions.driver)},
                 {"runtime_version", mpsb::format_cuda_version(versions.runtime)},
                 {"cublas_version", versions.cublas}}},
               {"gpus", ojson::array()},
               {"problem", ""}};
  const int status = probe_into(doc);
  // Replace invalid UTF-8 (a problem quotes the user's environment): a throw
  // here would leave the caller without its line.
  std::cout << doc.dump(-1, ' ', false, ojson::error_handler_t::replace) << std::endl;
  return status;
}

}  // namespace

int main(int argc, char** argv) {
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    if (arg == "-h" || arg == "--help") {
      std::cout << kHelp;
      return 0;
    }
    if (arg == "--version") {
      std::cout << "mpsbench-probe " << mpsb::build_version() << " (git " << mpsb::build_git_commit() << ")\n";
      return 0;
    }
    std::cerr << "mpsbench-probe: error: unknown option '" << arg << "' (see --help)\n";
    return kExitUsage;
  }
  return probe();
}
