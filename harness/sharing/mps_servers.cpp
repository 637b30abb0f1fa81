#include "sharing/mps_servers.hpp"

#include <dirent.h>

#include <algorithm>
#include <cctype>
#include <cstdlib>
#include <fstream>
#include <sstream>

#include "runtime/usage_error.hpp"

namespace mpsb {
namespace {

constexpr const char* kServer = "nvidia-cuda-mps-server";
constexpr const char* kControl = "nvidia-cuda-mps-control";
// What /proc/<pid>/status shows for either: the name cut to 15 characters.
constexpr const char* kTruncated = "nvidia-cuda-mps";

bool all_digits(const std::string& text) {
  return !text.empty() &&
         std::all_of(text.begin(), text.end(), [](char c) { return std::isdigit(static_cast<unsigned char>(c)); });
}

std::string base_name(const std::string& path) {
  const auto slash = path.rfind('/');
  return slash == std::string::npos ? path : path.substr(slash + 1);
}

// Name and real UID from a status file; false when either is missing.
bool read_status(const std::string& path, std::string& name, unsigned& uid) {
  std::ifstream in(path);
  if (!in) return false;
  bool have_name = false, have_uid = false;
  for (std::string line; std::getline(in, line);) {
    if (line.rfind("Name:", 0) == 0) {
      std::string value = line.substr(5);
      const auto first = value.find_first_not_of(" \t");
      name = first == std::string::npos ? "" : value.substr(first);
      while (!name.empty() && (name.back() == ' ' || name.back() == '\t' || name.back() == '\r')) name.pop_back();
      have_name = true;
    } else if (line.rfind("Uid:", 0) == 0) {
      std::istringstream fields(line.substr(4));
      unsigned long real = 0;
      if (fields >> real) {
        uid = static_cast<unsigned>(real);
        have_uid = true;
      }
    }
  }
  return have_name && have_uid;
}

// The executable's name from argv[0] in /proc/<pid>/cmdline; empty when unreadable.
std::string command_name(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return "";
  std::string argv0;
  std::getline(in, argv0, '\0');
  return base_name(argv0);
}

std::string who(const MpsProcess& p) {
  std::string text = p.process + " pid " + std::to_string(p.pid) + " uid " + std::to_string(p.uid);
  if (!p.host.empty()) text += " on " + p.host;
  return text;
}

}  // namespace

OtherMpsUsers parse_other_mps_users(const std::string& text) {
  if (text == "refuse") return OtherMpsUsers::refuse;
  if (text == "go-on") return OtherMpsUsers::go_on;
  throw UsageError("--other-mps-users: unknown value '" + text + "' (choose refuse or go-on)");
}

const char* to_string(OtherMpsUsers policy) { return policy == OtherMpsUsers::go_on ? "go-on" : "refuse"; }

std::string proc_root_from_environment() {
  const char* root = std::getenv("MPSBENCH_PROC_ROOT");
  return root != nullptr && *root != '\0' ? std::string(root) : std::string("/proc");
}

std::vector<MpsProcess> find_mps_processes(const std::string& proc_root) {
  std::vector<MpsProcess> found;
  DIR* dir = opendir(proc_root.c_str());
  if (dir == nullptr) return found;
  while (const dirent* entry = readdir(dir)) {
    const std::string pid = entry->d_name;
    if (!all_digits(pid) || pid.size() > 9) continue;
    const std::string base = proc_root + "/" + pid;
    std::string name;
    unsigned uid = 0;
    if (!read_status(base + "/status", name, uid)) continue;  // gone, or not a process directory
    if (name.rfind(kTruncated, 0) != 0) continue;
    MpsProcess p;
    p.pid = std::atoi(pid.c_str());
    p.uid = uid;
    // Name is at most 15 characters: the full one only when it fits, else argv[0].
    const std::string command = command_name(base + "/cmdline");
    if (name == kServer || command == kServer) {
      p.process = kServer;
    } else if (name == kControl || command == kControl) {
      p.process = kControl;
    } else if (name == kTruncated && command.rfind(kTruncated, 0) != 0) {
      p.process = kTruncated;  // a server or control daemon whose command line is hidden from us
    } else {
      continue;  // some other nvidia-cuda-mps* tool
    }
    found.push_back(p);
  }
  closedir(dir);
  std::sort(found.begin(), found.end(), [](const MpsProcess& a, const MpsProcess& b) { return a.pid < b.pid; });
  return found;
}

std::vector<MpsProcess> of_other_users(const std::vector<MpsProcess>& found, unsigned my_uid) {
  std::vector<MpsProcess> others;
  for (const auto& p : found) {
    if (p.uid != my_uid) others.push_back(p);
  }
  return others;
}

std::string describe_other_mps_users(const std::vector<MpsProcess>& others) {
  bool server = false, unknown = false;
  std::string list;
  for (const auto& p : others) {
    server = server || p.process == kServer;
    unknown = unknown || p.process == kTruncated;
    list += (list.empty() ? "" : ", ") + who(p);
  }
  const std::string what = server    ? "another user's MPS server is running"
                           : unknown ? "another user's MPS server or control daemon is running"
                                     : "another user's MPS control daemon is running";
  return what + " (" + list +
         "): a control daemon serves one user's MPS server at a time and makes the clients of any other "
         "user wait until that server has no clients left, silently serialising the two users' jobs, so "
         "this run's timings would include that wait";
}

std::string decide_other_mps_users(OtherMpsUsers policy, const std::vector<MpsProcess>& others) {
  if (others.empty()) return "";
  const std::string line = describe_other_mps_users(others);
  if (policy == OtherMpsUsers::refuse) {
    throw UsageError(line + "; run when it is gone, or pass --other-mps-users go-on to measure anyway");
  }
  return line + " (--other-mps-users go-on: measuring anyway)";
}

std::string serialize_mps_processes(const std::vector<MpsProcess>& processes) {
  std::string text;
  for (const auto& p : processes) {
    text += std::to_string(p.pid) + " " + std::to_string(p.uid) + " " + p.process + ";";
  }
  return text;
}

std::vector<MpsProcess> deserialize_mps_processes(const std::string& text, const std::string& host) {
  std::vector<MpsProcess> out;
  std::istringstream in(text);
  for (std::string item; std::getline(in, item, ';');) {
    std::istringstream fields(item);
    MpsProcess p;
    if (fields >> p.pid >> p.uid >> p.process) {
      p.host = host;
      out.push_back(p);
    }
  }
  return out;
}

}  // namespace mpsb
