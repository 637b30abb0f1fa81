// Opt-in fault injection for the reliability tests: MPSBENCH_FAULT makes one
// rank crash, run out of memory, hang, see a throttled GPU or a slowed CPU in one
// configuration, so the tests can drive every failure path on a machine
// without a GPU. Unset, it costs one comparison per configuration.
//
//   MPSBENCH_FAULT=KIND:rank=R:config=K
//     abort  rank R calls abort() after its workload setup in configuration K
//     oom    rank R's workload setup throws OutOfMemoryError, as cudaMalloc would
//     hang   rank R sleeps forever inside the timed loop of configuration K
//     throttle  rank R reports every repetition of configuration K as
//            throttled, as its GPU clock sampler would (on any device)
//     cpu_slow  rank R reports every repetition of configuration K as
//            CPU-slowed, its first thread's probe twice as slow as
//            --cpu-threshold allows (on any device)
// K is 1-based, as in the progress line. A rank idle in K is not affected.
#pragma once

#include <string>

namespace mpsb {

enum class FaultKind { none, abort, oom, hang, throttle, cpu_slow };

struct FaultSpec {
  FaultKind kind = FaultKind::none;
  int rank = 0;
  int config = 0;  // 1-based
};

// Throws UsageError (one line naming the bad part) on a malformed spec.
FaultSpec parse_fault_spec(const std::string& text);

// Reads MPSBENCH_FAULT once (call before any work); throws UsageError.
void init_fault_injection_from_environment();

// The injection points. `config` is the 1-based configuration index.
// After a workload's setup: abort or throw OutOfMemoryError when selected.
void inject_after_setup(int rank, int config);
// Inside the timed loop: never returns when a hang is selected.
void inject_in_timed_loop(int rank, int config);
// After each repetition: whether rank R is to report it as throttled.
bool inject_throttle(int rank, int config);
// After each repetition: whether rank R is to report it as CPU-slowed.
bool inject_cpu_slow(int rank, int config);

}  // namespace mpsb
