#include "measure/watchdog.hpp"

#include <cstdio>
#include <string>

#include "runtime/check.hpp"

namespace mpsb {

Watchdog::Watchdog() : thread_([this] { watch(); }) {}

Watchdog::~Watchdog() {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    stop_ = true;
  }
  cv_.notify_all();
  thread_.join();
}

void Watchdog::arm(double seconds, std::string what) {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    armed_ = seconds > 0;
    seconds_ = seconds;
    what_ = std::move(what);
    deadline_ = std::chrono::steady_clock::now() +
                std::chrono::duration_cast<std::chrono::steady_clock::duration>(std::chrono::duration<double>(seconds));
  }
  cv_.notify_all();
}

void Watchdog::disarm() {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    armed_ = false;
  }
  cv_.notify_all();
}

void Watchdog::watch() {
  std::unique_lock<std::mutex> lock(mutex_);
  while (!stop_) {
    if (!armed_) {
      cv_.wait(lock);
      continue;
    }
    if (cv_.wait_until(lock, deadline_) == std::cv_status::timeout && armed_ && !stop_ &&
        std::chrono::steady_clock::now() >= deadline_) {
      // The main thread is stuck by definition; MPI_Abort from here is the
      // only way to take the other ranks down with us (Open MPI and MPICH
      // allow it without MPI_THREAD_MULTIPLE in practice).
      char seconds[32];
      std::snprintf(seconds, sizeof seconds, "%g", seconds_);
      abort_fatal(what_ + " exceeded --timeout " + seconds + " s");
    }
  }
}

}  // namespace mpsb
