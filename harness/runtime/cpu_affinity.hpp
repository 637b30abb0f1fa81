// Untimed host work on every CPU the node lets this thread use, not just the
// ones the launcher bound the rank to (issue 28). `mpirun -np 1` (Open MPI
// binds to a core when np <= 2) puts a --mode streams rank on one core, so
// its k instance threads generated their inputs and computed their float64
// references one after another: set-up and verification cost k times one
// instance's. A WideAffinity widens the calling thread's CPU affinity to
// every CPU (the kernel keeps those of its cpuset) and restores the
// launcher's mask when it goes out of scope, before anything is timed: the
// measurement keeps the binding it was launched with.
#pragma once

#include <sched.h>

namespace mpsb {

class WideAffinity {
 public:
  WideAffinity();   // widens; where Linux refuses, the thread keeps its mask (widened() false)
  ~WideAffinity();  // the saved mask back (a failure there ends the job: timing would run unbound)
  WideAffinity(const WideAffinity&) = delete;
  WideAffinity& operator=(const WideAffinity&) = delete;
  bool widened() const { return widened_; }

 private:
  cpu_set_t saved_{};
  bool widened_ = false;
};

// CPUs in the calling thread's affinity mask (1 where it cannot be read).
int allowed_cpus();

// For a background thread that must not take CPU time from the timed one it was started by (the GPU
// monitor reads NVML back to back, about 4 ms a call): moves the calling thread off the CPUs of its
// inherited mask (the rank's binding) onto the others its cpuset allows. Returns false, the mask
// unchanged, where there are none (a rank bound to the whole cpuset, or a single CPU).
bool leave_bound_cpus();

}  // namespace mpsb
