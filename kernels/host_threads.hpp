// Untimed host work (input generation, float64 references) cut into chunks
// that a few threads take in turn. The thread count follows the calling
// thread's CPU affinity (a launcher's binding narrows it), at most
// kMaxHostThreads; the chunks do not depend on it, so neither does the result.
#pragma once

#include <sched.h>

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <exception>
#include <mutex>
#include <thread>
#include <vector>

namespace mpsb {

constexpr unsigned kMaxHostThreads = 8;

inline unsigned host_threads() {
  cpu_set_t set;
  CPU_ZERO(&set);
  if (sched_getaffinity(0, sizeof set, &set) != 0) return 1;  // unknown: one thread
  return static_cast<unsigned>(std::clamp(CPU_COUNT(&set), 1, static_cast<int>(kMaxHostThreads)));
}

// fn(c) for every chunk c in [0, chunks), on up to host_threads() threads (one
// where `chunks` is 1). The first exception a chunk throws is rethrown here,
// after every thread has stopped.
template <class Fn>
void for_each_chunk(std::int64_t chunks, Fn fn) {
  const auto threads = static_cast<unsigned>(std::min<std::int64_t>(host_threads(), std::max<std::int64_t>(chunks, 1)));
  std::atomic<std::int64_t> next{0};
  std::exception_ptr error;
  std::mutex error_mutex;
  auto work = [&] {
    for (std::int64_t c = next++; c < chunks; c = next++) {
      try {
        fn(c);
      } catch (...) {
        const std::lock_guard<std::mutex> lock(error_mutex);
        if (!error) error = std::current_exception();
        next = chunks;  // the others stop at their next chunk
      }
    }
  };
  std::vector<std::thread> pool;
  for (unsigned i = 1; i < threads; ++i) pool.emplace_back(work);
  work();
  for (auto& t : pool) t.join();
  if (error) std::rethrow_exception(error);
}

}  // namespace mpsb
