// A team of workload instances inside one rank, each on its own host thread
// and CUDA stream (--mode streams runs k of them; the process modes run one).
// Threads meet at a reusable barrier; only instance 0 talks to MPI
// (MPI_THREAD_FUNNELED).
#pragma once

#include <condition_variable>
#include <cstdint>
#include <mutex>

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

}  // namespace mpsb
