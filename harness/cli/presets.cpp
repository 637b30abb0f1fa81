#include "cli/presets.hpp"

#include <algorithm>
#include <cstdlib>
#include <dirent.h>
#include <fstream>
#include <limits.h>
#include <sys/stat.h>
#include <unistd.h>

#include <nlohmann/json.hpp>

#include "runtime/values.hpp"

// The presets directory of an installed mpsbench, relative to its bin directory (CMakeLists.txt computes
// it from GNUInstallDirs); MPSBENCH_DEFAULT_PRESET_DIR, the source tree's, comes from harness/CMakeLists.txt.
#ifndef MPSBENCH_INSTALLED_PRESET_DIR
#define MPSBENCH_INSTALLED_PRESET_DIR "../share/mpsbench/presets"
#endif

namespace mpsb {
namespace {

const char* kSuffix = ".json";

bool valid_name(const std::string& name) {
  return !name.empty() && std::all_of(name.begin(), name.end(), [](char c) {
    return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-' || c == '_';
  });
}

bool is_directory(const std::string& path) {
  struct stat st {};
  return stat(path.c_str(), &st) == 0 && S_ISDIR(st.st_mode);
}

// The directory of the running program (symbolic links resolved), "" where /proc cannot tell.
std::string program_directory() {
  char buf[PATH_MAX];
  const ssize_t n = readlink("/proc/self/exe", buf, sizeof buf - 1);
  if (n <= 0) return "";
  const std::string exe(buf, static_cast<std::size_t>(n));
  const std::size_t slash = exe.rfind('/');
  return slash == std::string::npos ? "" : exe.substr(0, slash);
}

// `rel` (relative, or absolute: then taken as it is) from `base`, leading "../" taken off `base`, so that
// messages name /usr/share/mpsbench/presets rather than /usr/bin/../share/mpsbench/presets.
std::string resolve(std::string base, std::string rel) {
  if (!rel.empty() && rel.front() == '/') return rel;
  while (rel.rfind("../", 0) == 0) {
    const std::size_t slash = base.rfind('/');
    if (slash == std::string::npos || slash == 0) break;
    base.erase(slash);
    rel.erase(0, 3);
  }
  return base + "/" + rel;
}

// The error for a preset directory that cannot be read: where it came from, and every directory looked in
// when it is what preset_directory() chose for want of any existing one.
std::string unreadable(const std::string& dir) {
  const std::vector<PresetPlace> places = preset_search_path();
  std::string why, looked;
  bool found = false;
  for (const auto& p : places) {
    if (p.dir == dir && why.empty()) why = p.why;
    found = found || is_directory(p.dir);
    looked += (looked.empty() ? "" : ", ") + p.dir + " (" + p.why + ")";
  }
  if (!why.empty() && !found && places.size() > 1) {
    return "--preset: no preset directory: looked in " + looked +
           "; set MPSBENCH_PRESET_DIR to the directory of the presets (NAME.json)";
  }
  return "--preset: cannot read the preset directory '" + dir + "'" + (why.empty() ? "" : " (" + why + ")");
}

std::vector<std::string> preset_names(const std::string& dir) {
  std::vector<std::string> names;
  DIR* d = opendir(dir.c_str());
  if (d == nullptr) throw UsageError(unreadable(dir));
  while (const dirent* entry = readdir(d)) {
    const std::string file = entry->d_name;
    const std::size_t n = file.size(), s = std::char_traits<char>::length(kSuffix);
    if (n > s && file.compare(n - s, s, kSuffix) == 0) names.push_back(file.substr(0, n - s));
  }
  closedir(d);
  std::sort(names.begin(), names.end());
  return names;
}

std::string known_list(const std::string& dir) {
  std::string known;
  for (const auto& n : preset_names(dir)) known += (known.empty() ? "" : ", ") + n;
  return known;
}

}  // namespace

std::vector<PresetPlace> preset_search_path() {
  if (const char* dir = std::getenv("MPSBENCH_PRESET_DIR"); dir != nullptr && *dir != '\0') {
    return {{dir, "MPSBENCH_PRESET_DIR"}};
  }
  std::vector<PresetPlace> places;
  if (const std::string bin = program_directory(); !bin.empty()) {
    places.push_back({resolve(bin, MPSBENCH_INSTALLED_PRESET_DIR), "installed, beside " + bin});
  }
  places.push_back({MPSBENCH_DEFAULT_PRESET_DIR, "source tree"});
  return places;
}

std::string preset_directory() {
  const std::vector<PresetPlace> places = preset_search_path();
  for (const auto& p : places) {
    if (is_directory(p.dir)) return p.dir;
  }
  return places.front().dir;
}

Preset load_preset(const std::string& dir, const std::string& name) {
  if (!valid_name(name)) throw UsageError("--preset: '" + name + "' is not a preset name");
  const std::string path = dir + "/" + name + kSuffix;
  std::ifstream in(path);
  if (!in) {
    const std::string known = known_list(dir);
    throw UsageError("--preset: unknown preset '" + name + "' (known: " + (known.empty() ? "none" : known) +
                     "; presets from " + dir + ")");
  }
  Preset p;
  p.name = name;
  try {
    const auto j = nlohmann::json::parse(in);
    p.description = j.at("description").get<std::string>();
    p.args = j.at("args").get<std::vector<std::string>>();
  } catch (const nlohmann::json::exception& e) {
    throw UsageError("--preset: " + path + ": " + e.what());
  }
  for (const auto& a : p.args) {
    if (a.rfind("--preset", 0) == 0) throw UsageError("--preset: " + path + ": a preset cannot name another");
  }
  return p;
}

std::vector<Preset> list_presets(const std::string& dir) {
  std::vector<Preset> presets;
  for (const auto& name : preset_names(dir)) presets.push_back(load_preset(dir, name));
  return presets;
}

std::vector<std::string> expand_presets(const std::vector<std::string>& args, const std::string& dir) {
  std::vector<std::string> out;
  for (std::size_t i = 0; i < args.size(); ++i) {
    std::string name;
    if (args[i] == "--preset") {
      if (i + 1 >= args.size()) throw UsageError("--preset: missing value");
      name = args[++i];
    } else if (args[i].rfind("--preset=", 0) == 0) {
      name = args[i].substr(9);
    } else {
      out.push_back(args[i]);
      continue;
    }
    const Preset p = load_preset(dir, name);
    out.insert(out.end(), p.args.begin(), p.args.end());
  }
  return out;
}

}  // namespace mpsb
