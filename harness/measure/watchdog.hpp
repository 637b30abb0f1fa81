// --timeout: a per-configuration deadline enforced by one thread per rank. A
// hung kernel or rank would otherwise leave the whole job waiting in a barrier
// until the batch system kills it, with no word on which configuration hung.
// Every rank arms the same deadline at the start of each configuration, idle
// ranks included, so a legitimately long configuration is judged alike on all.
#pragma once

#include <chrono>
#include <condition_variable>
#include <mutex>
#include <string>
#include <thread>

namespace mpsb {

class Watchdog {
 public:
  Watchdog();
  ~Watchdog();
  Watchdog(const Watchdog&) = delete;
  Watchdog& operator=(const Watchdog&) = delete;

  // From now on, `seconds` (> 0) may pass before disarm(); else the thread
  // prints "mpsbench: fatal: <what> exceeded --timeout S s" and calls
  // MPI_Abort (exit 3). seconds <= 0: no deadline.
  void arm(double seconds, std::string what);
  void disarm();

 private:
  void watch();
  std::mutex mutex_;
  std::condition_variable cv_;
  bool armed_ = false;
  bool stop_ = false;
  std::chrono::steady_clock::time_point deadline_;
  double seconds_ = 0;
  std::string what_;
  std::thread thread_;  // last: starts after the members it reads exist
};

}  // namespace mpsb
