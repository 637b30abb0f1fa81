#include "sharing/mode_table.hpp"

#include <cstdio>
#include <stdexcept>

#include "runtime/usage_error.hpp"

namespace mpsb {

const std::vector<SharingModeInfo>& sharing_modes() {
  static const std::vector<SharingModeInfo> modes = {
      {SharingMode::automatic, "auto", Expect::any, Expect::any,
       /*one_process=*/false, /*green_contexts=*/false, /*needs_gpu=*/false, /*recorded_as_found=*/true,
       /*hint=*/"",
       "record what each rank's context shows: timeslice, mps, mps-qos or mixed", ""},
      {SharingMode::timeslice, "timeslice", Expect::no, Expect::any,
       /*one_process=*/false, /*green_contexts=*/false, /*needs_gpu=*/true, /*recorded_as_found=*/false,
       /*hint=*/"stop the MPS daemon or choose --mode mps",
       "time slicing: ranks take turns on the GPU, none an MPS client", ""},
      {SharingMode::mps, "mps", Expect::yes, Expect::no,
       /*one_process=*/false, /*green_contexts=*/false, /*needs_gpu=*/true, /*recorded_as_found=*/false,
       /*hint=*/"use --mode mps-qos",
       "every rank a client of one MPS server", ""},
      {SharingMode::mps_qos, "mps-qos", Expect::yes, Expect::yes,
       /*one_process=*/false, /*green_contexts=*/false, /*needs_gpu=*/true, /*recorded_as_found=*/false,
       /*hint=*/"",
       "MPS clients, each with CUDA_MPS_ACTIVE_THREAD_PERCENTAGE set", ""},
      {SharingMode::streams, "streams", Expect::any, Expect::any,
       /*one_process=*/true, /*green_contexts=*/false, /*needs_gpu=*/false, /*recorded_as_found=*/false,
       /*hint=*/"",
       "one rank per GPU runs k instances in k streams and threads",
       "the first rank of each GPU runs k instances in k streams; other ranks idle"},
      {SharingMode::green, "green", Expect::no, Expect::any,
       /*one_process=*/true, /*green_contexts=*/true, /*needs_gpu=*/true, /*recorded_as_found=*/false,
       // An MPS client's kernels may spread beyond its green context's SMs
       // (CUDA driver API, Green Contexts): the partitions would not hold.
       /*hint=*/"green contexts partition the SMs of one process without MPS: stop the MPS daemon",
       "as streams, each instance in a CUDA green context holding 1/k of the SMs",
       "the first rank of each GPU runs k instances, each in a green context holding 1/k of the SMs; "
       "other ranks idle"},
  };
  return modes;
}

const SharingModeInfo& mode_info(SharingMode mode) {
  for (const auto& m : sharing_modes()) {
    if (m.id == mode) return m;
  }
  // A programming error, not bad input: an enumerator added without its row.
  throw std::logic_error("sharing mode " + std::to_string(static_cast<int>(mode)) + " has no row in mode_table.cpp");
}

std::string mode_choices() {
  const auto& modes = sharing_modes();
  std::string text;
  for (std::size_t i = 0; i < modes.size(); ++i) {
    text += (i == 0 ? "" : i + 1 == modes.size() ? " or " : ", ") + std::string(modes[i].name);
  }
  return text;
}

SharingMode parse_sharing_mode(const std::string& text) {
  for (const auto& m : sharing_modes()) {
    if (text == m.name) return m.id;
  }
  throw UsageError("--mode: unknown mode '" + text + "' (choose " + mode_choices() + ")");
}

const char* to_string(SharingMode mode) { return mode_info(mode).name; }

bool runs_instances_in_one_rank(SharingMode mode) { return mode_info(mode).one_process; }

std::string mode_listing() {
  auto yes_no = [](bool b) { return b ? "yes" : "no"; };
  auto expect = [](Expect e) { return e == Expect::yes ? "yes" : e == Expect::no ? "no" : "any"; };
  std::string text;
  for (const auto& m : sharing_modes()) {
    char line[160];
    std::snprintf(line, sizeof line, "%-10s mps=%-3s one-process=%-3s needs-gpu=%-3s ", m.name, expect(m.mps_client),
                  yes_no(m.one_process), yes_no(m.needs_gpu));
    text += line + std::string(m.description) + "\n";
  }
  return text;
}

}  // namespace mpsb
