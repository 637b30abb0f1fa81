// The values of mpsbench's own options: each parser throws UsageError, one
// line naming the flag and what was wrong with the value (values.hpp has the
// list and integer parsing the other tools share).
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "measure/plan.hpp"
#include "registry.hpp"

namespace mpsb {

// Seconds in (0, 3600]: --min-time, --max-time.
double parse_seconds(const std::string& flag, const std::string& text);
// --timeout: [0, 1e6] seconds, 0 for none (the bound keeps the deadline representable).
double parse_timeout(const std::string& flag, const std::string& text);
// --warmup-time: [0, 60] seconds; 0 leaves only the stability check.
double parse_warmup(const std::string& flag, const std::string& text);
// --energy-min-span: [0, 60] seconds (0: the kept repetitions alone).
double parse_energy_span(const std::string& flag, const std::string& text);
// "1", "1%" or "0.5" percent, returned as a fraction; `allow_100`: 100 % is
// a valid value (a threshold), else the range is open at 100 (a noise target).
double parse_percent(const std::string& flag, const std::string& text, bool allow_100);
// --cpu-threshold: how much slower than its fastest, in (0, 1000] percent ("30", "30%"), as a fraction.
double parse_slowdown_percent(const std::string& flag, const std::string& text);
// --allreduce BYTES: a whole number of doubles, optionally with K/M/G (KiB, MiB, GiB), at most 1G.
std::int64_t parse_allreduce_bytes(const std::string& flag, const std::string& text);
// --gpus: CUDA device indices ("3", leading zeros dropped) or GPU-/MIG- UUIDs
// or prefixes of one, as nvidia-smi -L prints them; none twice.
std::vector<std::string> parse_gpu_list(const std::string& flag, const std::string& text);

// The registered kernel `name`; a pointer, not a reference: the entry lives in
// the registry, whatever the lifetime of the arguments (GCC 13's
// -Wdangling-reference cannot see that).
const KernelInfo* known_kernel(const std::string& flag, const std::string& name);
// Every size at most the kernel's largest.
void check_size_limits(const std::string& kernel, const std::vector<std::int64_t>& sizes);
// --param KERNEL.NAME=VALUE into `params`, checked against what the kernel declares.
void parse_param(const std::string& flag, const std::string& text,
                 std::map<std::string, std::map<std::string, std::int64_t>>& params);
// --mix matmul:4,inference/fp16/64:4: at least two tenants.
std::vector<Tenant> parse_mix(const std::string& flag, const std::string& text);

}  // namespace mpsb
