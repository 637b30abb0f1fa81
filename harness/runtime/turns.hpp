// Taking turns with the other jobs of a sweep round (mpsbench-sweep runs a round's modes at once, on the
// same cores, and lets one job at a time work: docs/measurement.md, "Turns").
//
// Why: at one rank per GPU the MPS gain is one process against another, and on a shared host a core's
// speed moves by 1.3-2x within seconds. Jobs run one after the other measure the same configuration on
// different hosts, in effect; jobs that take turns of one configuration (0.1-0.3 s) measure it on the same
// core within a second (results/h200-2026-11-28/paired-turns: 20 ms turns agree within 3 %, one job after
// the other differ by up to 1.4x).
//
// A turn is one repetition: the modes' repetitions of a configuration alternate (20 ms turns agreed
// within 3 %; turns of a whole configuration, 0.1-0.3 s, did not: the host's slow spells are about that
// long). The first turn of a configuration also holds its set-up and warm-up, the last its verification
// and report.
//
// The sweep listens on a Unix socket per job (--turns PATH). Rank 0 asks for each turn ("want C S\n":
// configuration C from 0, step S its repetition from 0; C = -1 for opening the GPUs, the plan's size for
// the final report) and waits in a blocking read for "go\n"; the other ranks wait asleep (a polled,
// sleeping broadcast); "done\n" gives the turn back. While one job works, every other one sleeps:
// nothing of theirs runs on the cores.
#pragma once

#include <mpi.h>

#include <string>

namespace mpsb {

class Turns {
 public:
  // path empty: no turns, every call returns at once. Rank 0 connects (a FatalError when it cannot).
  Turns(MPI_Comm world, int rank, const std::string& path);
  ~Turns();
  Turns(const Turns&) = delete;
  Turns& operator=(const Turns&) = delete;

  bool enabled() const { return enabled_; }

  // Collective over world: returns on every rank once this job has the turn for (config, 0).
  void take(long config);
  // Collective over comm, whose rank 0 is world rank 0 (a configuration's active ranks): the turn held
  // is given back and the one for (config, step) taken.
  void pass(MPI_Comm comm, long config, long step);
  // Rank 0: the turn back to the sweep (a no-op on the other ranks and without turns).
  void give();

  // Holds a turn from its taking to the end of a scope.
  class Held {
   public:
    Held(Turns& turns, long config) : turns_(turns) { turns_.take(config); }
    ~Held() {
      try {
        turns_.give();
      } catch (...) {
        // Unwinding already (or the sweep is gone): the closed connection gives the turn back.
      }
    }
    Held(const Held&) = delete;
    Held& operator=(const Held&) = delete;

   private:
    Turns& turns_;
  };

 private:
  void ask(MPI_Comm comm, long config, long step);
  void send(const std::string& line);
  std::string receive_line();

  MPI_Comm world_;
  int rank_;
  bool enabled_;
  bool holding_ = false;
  int fd_ = -1;
  std::string path_;
};

}  // namespace mpsb
