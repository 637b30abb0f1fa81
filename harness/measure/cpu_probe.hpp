// A fixed, short piece of CPU work timed on the calling thread: how fast its
// host CPU is right now. The vCPUs of a shared host slow down on their own,
// 1.4-2x for 0.1-1 s at a time (the H200 host, 2026-11-28: a pinned probe on
// every core; a small cuBLAS GEMM's launch-bound call took 7.0-7.5 us in some
// processes and 10-11 us in others), so each timed thread runs this probe
// around every repetition (cpu_watch.hpp) and compares it with its fastest.
// The work: relaxation sweeps like hybrid's over three arrays of 2048 floats
// (24 KiB, resident in L1 and L2), laid out at fixed offsets modulo 4 KiB
// (staggered_host_arrays.hpp) so the probe's own speed does not depend on
// where the heap put it. About 5 us per run on a current core; the figure is
// the fastest of three runs, so one interrupt does not make it slow.
#pragma once

#include <string>

#include "staggered_host_arrays.hpp"

namespace mpsb {

class CpuProbe {
 public:
  static constexpr int kCells = 2048;
  static constexpr int kSweeps = 8;  // per run
  static constexpr int kRuns = 3;    // the probe's figure: the fastest

  // Allocates and fills its arrays: call it on the thread that will run it (first touch).
  CpuProbe();
  // Seconds of the fastest of kRuns runs of kSweeps sweeps.
  double seconds();
  // The field's sum: finite and within [0, kCells] whatever ran (tests; it keeps the sweeps observable).
  double checksum() const;

 private:
  StaggeredHostArrays arrays_;
  int current_ = 0;  // the slot holding the field
};

// What the probe runs, as the record names it: "relax_sweep_2048x8".
std::string cpu_probe_name();

}  // namespace mpsb
