// Other users' MPS servers and control daemons on this host. A control daemon
// runs one MPS server per user at a time: a client of another user waits until
// the running server has no clients left, and only then gets a server of its
// own. CUDA says nothing about that wait, so a job that shares a daemon with
// another user's job is silently serialised behind it and its timings include
// the wait. mpsbench looks before any GPU work (--other-mps-users).
//
// The processes are found in /proc/<pid>/status (Name, Uid) under a root
// that tests inject (MPSBENCH_PROC_ROOT, default /proc). The kernel truncates
// Name to 15 characters, so both executables show as "nvidia-cuda-mps";
// /proc/<pid>/cmdline tells the server from the control daemon where it is
// readable.
#pragma once

#include <string>
#include <vector>

namespace mpsb {

enum class OtherMpsUsers { refuse, go_on };

OtherMpsUsers parse_other_mps_users(const std::string& text);  // throws UsageError
const char* to_string(OtherMpsUsers policy);

struct MpsProcess {
  int pid = 0;
  unsigned uid = 0;      // real UID (the first field of Uid:)
  std::string process;   // "nvidia-cuda-mps-server", "nvidia-cuda-mps-control", or
                         // "nvidia-cuda-mps" when the command line could not be read
  std::string host;      // filled in by the caller that gathers hosts
};

// MPSBENCH_PROC_ROOT, or /proc.
std::string proc_root_from_environment();

// Every MPS server and control daemon under `proc_root` (numeric directories
// only; unreadable or vanished processes are skipped), in PID order.
std::vector<MpsProcess> find_mps_processes(const std::string& proc_root);

// Those of `found` whose UID is not `my_uid`.
std::vector<MpsProcess> of_other_users(const std::vector<MpsProcess>& found, unsigned my_uid);

// ONE line (no newline) saying what the processes are and what they do to the
// measurement; `others` must not be empty.
std::string describe_other_mps_users(const std::vector<MpsProcess>& others);

// The decision on what every host found: nothing with none; with some, a
// UsageError naming them (refuse), or the line to print as a warning (go_on).
std::string decide_other_mps_users(OtherMpsUsers policy, const std::vector<MpsProcess>& others);

// "4242 1001 nvidia-cuda-mps-server;..." and back: what one host sends the others.
std::string serialize_mps_processes(const std::vector<MpsProcess>& processes);
std::vector<MpsProcess> deserialize_mps_processes(const std::string& text, const std::string& host);

}  // namespace mpsb
