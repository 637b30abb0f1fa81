#include "runtime/cpu_affinity.hpp"

#include <pthread.h>

#include <cstring>
#include <string>

#include "runtime/check.hpp"

namespace mpsb {

WideAffinity::WideAffinity() {
  CPU_ZERO(&saved_);
  if (pthread_getaffinity_np(pthread_self(), sizeof saved_, &saved_) != 0) return;  // unknown mask: left alone
  cpu_set_t all;
  CPU_ZERO(&all);
  for (int cpu = 0; cpu < CPU_SETSIZE; ++cpu) CPU_SET(cpu, &all);
  // Linux keeps the CPUs of the thread's cpuset and fails only if none is left.
  widened_ = pthread_setaffinity_np(pthread_self(), sizeof all, &all) == 0;
}

WideAffinity::~WideAffinity() {
  if (!widened_) return;
  if (const int rc = pthread_setaffinity_np(pthread_self(), sizeof saved_, &saved_); rc != 0) {
    // A destructor cannot throw, and timing with a mask other than the launcher's would measure
    // something else: stop.
    abort_fatal(std::string("cannot restore the launcher's CPU affinity after untimed work: ") + std::strerror(rc));
  }
}

bool leave_bound_cpus() {
  cpu_set_t bound;
  CPU_ZERO(&bound);
  if (pthread_getaffinity_np(pthread_self(), sizeof bound, &bound) != 0) return false;
  cpu_set_t others;
  CPU_ZERO(&others);
  for (int cpu = 0; cpu < CPU_SETSIZE; ++cpu) {
    if (!CPU_ISSET(cpu, &bound)) CPU_SET(cpu, &others);
  }
  // Linux keeps the CPUs of the thread's cpuset and fails (EINVAL) when none of `others` is in it.
  return pthread_setaffinity_np(pthread_self(), sizeof others, &others) == 0;
}

int allowed_cpus() {
  cpu_set_t set;
  CPU_ZERO(&set);
  if (pthread_getaffinity_np(pthread_self(), sizeof set, &set) != 0) return 1;
  return CPU_COUNT(&set) > 0 ? CPU_COUNT(&set) : 1;
}

}  // namespace mpsb
