// A team of workload instances inside one rank, each on its own host thread
// and CUDA stream (--mode streams and green run k of them; the process modes
// run one), and how the team and the other active ranks agree: threads meet at
// a reusable barrier, and only instance 0 talks to MPI (MPI_THREAD_FUNNELED)
// with the values every active rank reduces alike.
#pragma once

#include <mpi.h>

#include <condition_variable>
#include <cstdint>
#include <mutex>
#include <optional>
#include <vector>

#include "measure/cpu_watch.hpp"
#include "measure/settings.hpp"
#include "runtime/turns.hpp"

namespace mpsb {

class ThreadBarrier {
 public:
  explicit ThreadBarrier(int parties) : parties_(parties) {}
  void wait() {
    std::unique_lock<std::mutex> lock(mutex_);
    const std::uint64_t generation = generation_;
    if (++arrived_ == parties_) {
      arrived_ = 0;
      ++generation_;
      cv_.notify_all();
      return;
    }
    cv_.wait(lock, [&] { return generation != generation_; });
  }

 private:
  std::mutex mutex_;
  std::condition_variable cv_;
  int parties_;
  int arrived_ = 0;
  std::uint64_t generation_ = 0;
};

// The repetitions decided so far: written by instance 0 between two team
// barriers, from values reduced over the active ranks (so the same on every
// rank), read by every instance after the second.
struct RepetitionState {
  std::vector<double> kept_windows;
  double all_windows_s = 0;  // every repetition's window, discarded ones included
  double first_start = 0;  // min(start) of the first repetition
  int taken = 0;
  int discarded = 0;      // dropped by --discard-throttled
  int cpu_discarded = 0;  // dropped by --discard-cpu-slowed (one both throttled and slowed may count in both)
  bool affected = false;  // the last repetition: some GPU was throttled during it
  // The last repetition's host CPUs, the largest over every timed thread of every active rank: the probe
  // ratio, steal and run-queue time (nullopt where some thread could not read them); CPU-slowed or not.
  double cpu_ratio = 1;
  std::optional<double> steal_s, run_delay_s;
  bool cpu_slowed = false;
  bool keep = false;      // the last repetition counts
  bool more = true;       // take another
};

// What the instances of one rank share while they measure together.
struct Team {
  Team(int size, MPI_Comm comm, double clock_offset, bool mix) : barrier(size), starts(size), ends(size),
        setup_failed(size), affected(size), cpu(size), active(comm), offset(clock_offset), mixed(mix) {}
  ThreadBarrier barrier;
  std::vector<double> starts, ends;
  std::vector<char> setup_failed;  // per instance, written before a barrier
  std::vector<char> affected;      // per instance: its GPU sampler saw throttling in this repetition
  std::vector<CpuReading> cpu;     // per instance: its CPU watch's reading of this repetition
  MPI_Comm active;
  double offset;
  double config_start = 0;  // now_seconds() when this rank began the configuration (timing.hpp)
  bool mixed;              // a mix: tenants calibrate their own iteration counts
  double window = 0;       // written by instance 0 between barriers
  double shortest_own = 0;  // likewise: the shortest end - start of any instance in the last batch
  bool any_failed = false;  // likewise: some instance of some active rank failed its setup
  RepetitionState reps;     // likewise
  Turns* turns = nullptr;   // mpsbench-sweep's turns, or nullptr
};

// After setup every instance of every active rank learns whether any of them
// ran out of memory: the threads through the team, the ranks through one
// MPI_Allreduce on the active communicator. Either all time or none does, so
// no rank waits in a barrier the others never reach.
bool any_setup_failed(Team& team, int instance, bool failed);

// Every instance of every active rank starts together: the threads meet,
// instance 0 joins the MPI barrier, the threads meet again.
void start_together(Team& team, int instance);

// In mpsbench-sweep's turns: the threads meet, instance 0 gives the job's turn back and waits (asleep, like
// every active rank) for the one of (config, step), the threads meet again. Without turns, nothing.
void next_turn(Team& team, int instance, long config, long step);

// After every repetition one MPI_Allreduce (MPI_MAX) over the active ranks of
// {-min start, max end, affected, the CPU readings' largest ratio, steal and
// run delay, and whether some thread could not read the latter two} gives
// every rank the window, whether any GPU was throttled in it and whether any
// host CPU was slowed; instance 0 of each rank then applies the same pure
// rules to the same values, so every rank keeps, drops and stops alike, and
// its threads read the verdict after the barrier.
void agree_on_repetition(Team& team, int instance, const MeasureSettings& settings);

}  // namespace mpsb
