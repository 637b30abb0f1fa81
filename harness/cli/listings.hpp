// What mpsbench prints instead of measuring: --help, --version,
// --list-kernels, --list-presets and --list-modes.
#pragma once

#include <ostream>

#include "cli/options.hpp"

namespace mpsb {

// Each listing `options` asks for, in that order.
void print_listings(std::ostream& out, const Options& options);

}  // namespace mpsb
