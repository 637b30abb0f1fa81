#include "presets.hpp"

#include <algorithm>
#include <cstdlib>
#include <dirent.h>
#include <fstream>

#include <nlohmann/json.hpp>

#include "cli_values.hpp"

namespace mpsb {
namespace {

const char* kSuffix = ".json";

bool valid_name(const std::string& name) {
  return !name.empty() && std::all_of(name.begin(), name.end(), [](char c) {
    return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-' || c == '_';
  });
}

std::vector<std::string> preset_names(const std::string& dir) {
  std::vector<std::string> names;
  DIR* d = opendir(dir.c_str());
  if (d == nullptr) throw UsageError("--preset: cannot read the preset directory '" + dir + "'");
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

std::string preset_directory() {
  if (const char* dir = std::getenv("MPSBENCH_PRESET_DIR"); dir != nullptr && *dir != '\0') return dir;
  return MPSBENCH_DEFAULT_PRESET_DIR;
}

Preset load_preset(const std::string& dir, const std::string& name) {
  if (!valid_name(name)) throw UsageError("--preset: '" + name + "' is not a preset name");
  const std::string path = dir + "/" + name + kSuffix;
  std::ifstream in(path);
  if (!in) throw UsageError("--preset: unknown preset '" + name + "' (known: " + known_list(dir) + ")");
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
