// The sharing modes (--mode), one row each: everything the C++ side knows
// about a mode is its row in mode_table.cpp. Parsing, --help, --list-modes,
// the --device cpu rule, the check of each rank's MPS state
// (sharing_state.hpp), the banner and the records read these properties; no
// code branches on a mode's name. Adding a mode is one row there, plus the
// sweep's registry and the results schema's enum of modes.
#pragma once

#include <string>
#include <vector>

namespace mpsb {

enum class SharingMode { automatic, timeslice, mps, mps_qos, streams, green };

// What a mode requires of every rank's context.
enum class Expect { no, yes, any };

struct SharingModeInfo {
  SharingMode id;
  const char* name;  // --mode's value, and the results' mode_requested
  // Must each rank be an MPS client (CU_DEVICE_ATTRIBUTE_MPS_ENABLED)? CUDA
  // silently runs without MPS when no daemon answers, so a mode is verified.
  Expect mps_client;
  // Must an MPS client run with CUDA_MPS_ACTIVE_THREAD_PERCENTAGE? yes: set;
  // no: unset or 100; any: not looked at.
  Expect thread_percentage;
  // The first rank of each GPU runs the k instances of a configuration on k
  // threads of one process; the other ranks idle. Otherwise k ranks run one each.
  bool one_process;
  bool green_contexts;      // each of those instances in a green context holding 1/k of the SMs
  bool needs_gpu;           // refused with --device cpu
  bool recorded_as_found;   // results record what the ranks' contexts show, not this name
  const char* hint;         // ends the refusal when a rank's state contradicts this mode
  const char* description;  // --help and --list-modes
  const char* banner_note;  // after "mode: NAME" in the run's banner; empty: nothing
};

// Every mode, in the order --help and --list-modes show them.
const std::vector<SharingModeInfo>& sharing_modes();
const SharingModeInfo& mode_info(SharingMode mode);

SharingMode parse_sharing_mode(const std::string& text);  // throws UsageError naming the choices
const char* to_string(SharingMode mode);
// streams and green: the first rank of each GPU runs the k instances of a
// configuration on k threads; the other modes run one instance per rank.
bool runs_instances_in_one_rank(SharingMode mode);

// "auto, timeslice, mps, mps-qos, streams or green"
std::string mode_choices();
// One line per mode, what --list-modes prints:
//   "NAME mps=yes|no|any one-process=yes|no needs-gpu=yes|no DESCRIPTION"
std::string mode_listing();

}  // namespace mpsb
