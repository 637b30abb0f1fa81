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

// Where presets are looked for, in this order:
//   1. $MPSBENCH_PRESET_DIR when set and not empty, and then nowhere else (the override wins);
//   2. ../share/mpsbench/presets beside the running program (/proc/self/exe): an installed mpsbench
//      (the path relative to the bin directory is compiled in: MPSBENCH_INSTALLED_PRESET_DIR);
//   3. the source tree's presets/ (compiled in: MPSBENCH_DEFAULT_PRESET_DIR): a build-tree run.
struct PresetPlace {
  std::string dir;
  std::string why;  // for messages: "MPSBENCH_PRESET_DIR", "installed", "source tree"
};
std::vector<PresetPlace> preset_search_path();
// The first directory of preset_search_path() that exists; where none does, the first of them, so
// that reading it fails with an error naming every directory looked in.
std::string preset_directory();
// Every preset in `dir`, by name. Throws UsageError naming a malformed file.
std::vector<Preset> list_presets(const std::string& dir);
Preset load_preset(const std::string& dir, const std::string& name);
// Replaces each "--preset NAME" / "--preset=NAME" by the preset's arguments.
std::vector<std::string> expand_presets(const std::vector<std::string>& args, const std::string& dir);

}  // namespace mpsb
