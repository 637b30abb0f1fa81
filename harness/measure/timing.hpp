// Where a job's time goes (issue 28): per configuration, the phases of its
// life from its start to its result being written, and per job the start-up
// before the first configuration. Seconds on the steady clock, read at points
// every instance passes anyway: a few clock reads per phase, always on.
#pragma once

#include "runtime/steady_clock.hpp"

namespace mpsb {

// One instance's own view of one configuration; it travels with its samples.
struct InstanceTiming {
  double setup_s = 0;         // its stream, events and workload: creation, inputs, upload, handles (0: reused)
  double first_run_s = 0;     // its untimed first run (0: reused, warm already)
  double ready_s = 0;         // from the configuration's start until every instance had set up
  double warmup_s = 0;        // calibration and warm-up, barriers included
  double metering_s = 0;      // the extra metered stretch before the repetitions (--energy-min-span)
  double repetitions_s = 0;   // the loop of repetitions, the gaps between windows included
  double windows_s = 0;       // the windows of every repetition, discarded ones included
  double verification_s = 0;  // its verification after timing
  bool reused = false;        // its workload came from the previous configuration
};

// One configuration, as its result records it (`timing`). The phases follow
// rank 0's first instance, which waits for every other at each step, so they
// add up to wall_s; setup_s is the slowest instance's own.
struct ConfigTiming {
  double setup_s = 0;         // the slowest instance's setup
  double first_run_s = 0;     // first runs, and waiting for the slowest instance to be ready
  double warmup_s = 0;
  double metering_s = 0;
  double repetitions_s = 0;   // windows_s plus the gaps between them (poison, barriers, agreement)
  double windows_s = 0;
  double verification_s = 0;  // until every instance had verified and sent its samples
  double gather_s = 0;        // the samples to rank 0
  double report_s = 0;        // summarize and every reporter
  double wall_s = 0;          // from the configuration's start to its result being reported
  int reused_instances = 0;   // instances whose workload was kept from the previous configuration
  int instances = 0;
};

// The job before and around its configurations (context `timing`), on rank 0.
struct JobTiming {
  double mpi_init_s = 0;       // MPI_Init_thread and the communicators
  double options_s = 0;        // the command line and presets
  double preflight_s = 0;      // result files, other MPS users, the GPU probe and the device decision
  double gpu_open_s = 0;       // every rank's GPU context, in turn, and the free memory after
  double placement_s = 0;      // placement, plan, memory preflight, context and --resume
  double reporters_s = 0;      // the results file's first write and the banner
  double clock_offset_s = 0;   // ranks on other hosts against rank 0's clock
  double monitors_s = 0;       // the GPU monitors opened
  double configurations_s = 0; // every configuration, from the first one's start to the last one's report
  double total_s = 0;          // from the process's start to the results file's last write
};

// Seconds since it was made, or since the last lap().
class Stopwatch {
 public:
  Stopwatch() : start_(now_seconds()) {}
  double seconds() const { return now_seconds() - start_; }
  double lap() {
    const double now = now_seconds();
    const double elapsed = now - start_;
    start_ = now;
    return elapsed;
  }

 private:
  double start_;
};

}  // namespace mpsb
