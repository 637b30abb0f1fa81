// Named option sets (presets/NAME.json: a description and a list of
// command-line arguments). `--preset NAME` stands for those arguments in
// place, so presets go through the same parser and checks as typed flags, and
// a flag after it overrides the preset's.
#pragma once

#include <string>
#include <vector>

namespace mpsb {

struct Preset {
  std::string name;
  std::string description;
  std::vector<std::string> args;
};

// $MPSBENCH_PRESET_DIR, else the repository's presets/ directory.
std::string preset_directory();
// Every preset in `dir`, by name. Throws UsageError naming a malformed file.
std::vector<Preset> list_presets(const std::string& dir);
Preset load_preset(const std::string& dir, const std::string& name);
// Replaces each "--preset NAME" / "--preset=NAME" by the preset's arguments.
std::vector<std::string> expand_presets(const std::vector<std::string>& args, const std::string& dir);

}  // namespace mpsb
