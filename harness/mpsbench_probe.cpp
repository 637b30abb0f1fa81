// mpsbench-probe: what a CUDA context sees in this process's environment, as
// one line of JSON. mpsbench-sweep --app runs it once per GPU in exactly the
// environment the copies of a farmed application get (their
// CUDA_VISIBLE_DEVICES, CUDA_MPS_PIPE_DIRECTORY, thread percentage), because
// the application itself cannot report whether its context became an MPS
// client; run without a restriction it lists the GPUs a node shows.
//
// Prints {"tool", "host", "version", "git_commit", "git_dirty", "cuda":
// {driver_version, runtime_version, cublas_version}, "gpus": [one entry per
// visible device, each opened in turn: index, name, uuid, sm_count,
// memory_total_bytes, memory_free_bytes, compute_mode, sm_clock_peak_khz,
// mps_enabled, mps_active_thread_percentage], "problem"}. Exit status: 0 (no
// usable GPU is a `problem`, not an error: the caller decides), 2 bad usage or
// a malformed CUDA_MPS_ACTIVE_THREAD_PERCENTAGE, 3 a device could not be
// opened (an MPS daemon refusing the client, say): the JSON names it. No MPI.
#include <unistd.h>

#include <iostream>
#include <string>

#include <nlohmann/json.hpp>

#include "build_info.hpp"
#include "check.hpp"
#include "cli_values.hpp"
#include "device.hpp"

namespace {

using ojson = nlohmann::ordered_json;

constexpr int kExitUsage = 2;

const char* const kHelp =
    "usage: mpsbench-probe\n"
    "\n"
    "Prints one line of JSON: what a CUDA context sees in this process's environment\n"
    "for every visible device (name, UUID, SM count, memory, compute mode, whether the\n"
    "context is an MPS client, its CUDA_MPS_ACTIVE_THREAD_PERCENTAGE), the CUDA\n"
    "versions, and a `problem` when no device is usable. mpsbench-sweep --app runs it\n"
    "in the environment of a farmed application's copies to verify the sharing mode.\n"
    "\n"
    "Exit status: 0 (also when no GPU is usable: see `problem`), 2 bad usage,\n"
    "3 a device could not be opened.\n";

std::string host_name() {
  char name[256] = {};
  if (gethostname(name, sizeof name - 1) != 0) return "?";
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
  int status = 0;
  const mpsb::GpuProbe found = mpsb::probe_gpus({});
  doc["problem"] = found.problem;
  for (int index : found.usable) {
    try {
      doc["gpus"].push_back(gpu_json(mpsb::open_gpu(index)));
    } catch (const mpsb::UsageError& e) {
      doc["problem"] = e.what();
      status = kExitUsage;
      break;
    } catch (const std::exception& e) {
      doc["problem"] = "device " + std::to_string(index) + ": " + e.what();
      status = mpsb::kExitFatal;
      break;
    }
  }
  std::cout << doc.dump() << std::endl;
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
  mpsb::set_error_identity(0, host_name());
  return probe();
}
