// mpsbench's options, one row each. Parsing (options.cpp) and --help
// (usage.cpp) are both generated from these rows, so an option is declared
// once: its name, value placeholder, default, help text and how its value
// lands in Options. Presets (presets.hpp) are lists of these options.
#pragma once

#include <string>
#include <vector>

#include "cli/options.hpp"

namespace mpsb {

struct OptionSpec {
  const char* name;           // "--kernel"
  const char* alias;          // "-h", or "" for none
  const char* placeholder;    // "LIST"; "" for a flag, which takes no value
  const char* shown_default;  // what --help gives as "(default: ...)"; "" for none
  std::string help;           // one paragraph; --help wraps it
  // Sets what the option asks for; throws UsageError naming `flag` and the bad
  // value. A flag is applied with an empty value. nullptr: --preset, whose
  // arguments replace it before parsing (expand_presets).
  void (*apply)(Options& options, const std::string& flag, const std::string& value);
};

// In the order --help lists them.
const std::vector<OptionSpec>& option_table();
// The row named `flag` (a name or an alias), or nullptr.
const OptionSpec* find_option(const std::string& flag);

}  // namespace mpsb
