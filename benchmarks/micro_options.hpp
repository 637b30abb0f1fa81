// mpsbench-micro's own flags. They are taken out of argv before
// benchmark::Initialize sees it, so whatever the library does not know either
// is left behind and reported as unrecognized.
#pragma once

#include <cstdint>
#include <map>
#include <stdexcept>
#include <string>
#include <vector>

#include "runtime/values.hpp"

namespace mpsb::micro {

using mpsb::UsageError;

enum class DeviceRequest { automatic, cpu, gpu };

struct MicroOptions {
  DeviceRequest device = DeviceRequest::automatic;
  std::vector<std::int64_t> sizes;                                // every kernel; empty: its defaults
  std::map<std::string, std::vector<std::int64_t>> kernel_sizes;  // --sizes=KERNEL=LIST, wins over `sizes`
  std::string benchmark_out;  // --benchmark_out=PATH, written by us (see micro_main.cpp), not by the library
  bool show_help = false;
  bool list_kernels = false;
};

// Consumes the flags it recognizes, compacting argv and updating *argc.
// Throws UsageError naming the flag and the bad value.
MicroOptions parse_micro_options(int* argc, char** argv);

std::string micro_usage_text();

}  // namespace mpsb::micro
