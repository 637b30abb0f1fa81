// WideAffinity (issue 28): untimed work on every CPU, the launcher's binding back before timing; and
// leave_bound_cpus: the GPU monitor's thread off the timed rank's core.
#include <gtest/gtest.h>

#include <pthread.h>
#include <sched.h>

#include <thread>

#include "runtime/cpu_affinity.hpp"

namespace mpsb {
namespace {

// Binds the calling thread to the first CPU it may use, as mpirun --bind-to core; returns that CPU.
int bind_to_first_cpu() {
  cpu_set_t current;
  CPU_ZERO(&current);
  EXPECT_EQ(pthread_getaffinity_np(pthread_self(), sizeof current, &current), 0);
  int first = 0;
  while (!CPU_ISSET(first, &current)) ++first;
  cpu_set_t one;
  CPU_ZERO(&one);
  CPU_SET(first, &one);
  EXPECT_EQ(pthread_setaffinity_np(pthread_self(), sizeof one, &one), 0);
  return first;
}

TEST(WideAffinity, WidensAOneCoreBindingAndRestoresIt) {
  const int all = allowed_cpus();
  if (all < 2) GTEST_SKIP() << "one CPU: nothing to widen";
  std::thread([all] {  // a thread of its own: the test's main thread keeps its mask
    const int bound = bind_to_first_cpu();
    ASSERT_EQ(allowed_cpus(), 1);
    {
      const WideAffinity wide;
      EXPECT_TRUE(wide.widened());
      EXPECT_GE(allowed_cpus(), all);
    }
    EXPECT_EQ(allowed_cpus(), 1);
    cpu_set_t after;
    CPU_ZERO(&after);
    ASSERT_EQ(pthread_getaffinity_np(pthread_self(), sizeof after, &after), 0);
    EXPECT_TRUE(CPU_ISSET(bound, &after));
  }).join();
}

TEST(LeaveBoundCpus, MovesOffTheBoundCoreOntoAllTheOthers) {
  const int all = allowed_cpus();
  if (all < 2) GTEST_SKIP() << "one CPU: nowhere else to go";
  std::thread([all] {
    const int bound = bind_to_first_cpu();
    ASSERT_EQ(allowed_cpus(), 1);
    EXPECT_TRUE(leave_bound_cpus());
    cpu_set_t after;
    CPU_ZERO(&after);
    ASSERT_EQ(pthread_getaffinity_np(pthread_self(), sizeof after, &after), 0);
    EXPECT_FALSE(CPU_ISSET(bound, &after));
    EXPECT_EQ(CPU_COUNT(&after), all - 1);
  }).join();
}

TEST(LeaveBoundCpus, StaysWhereTheBindingIsTheWholeCpuset) {
  std::thread([] {
    cpu_set_t before;
    CPU_ZERO(&before);
    ASSERT_EQ(pthread_getaffinity_np(pthread_self(), sizeof before, &before), 0);
    // Unbound (every CPU of the cpuset): there is no other CPU, so the mask must not change.
    cpu_set_t all;
    CPU_ZERO(&all);
    for (int cpu = 0; cpu < CPU_SETSIZE; ++cpu) CPU_SET(cpu, &all);
    ASSERT_EQ(pthread_setaffinity_np(pthread_self(), sizeof all, &all), 0);
    cpu_set_t wide;
    CPU_ZERO(&wide);
    ASSERT_EQ(pthread_getaffinity_np(pthread_self(), sizeof wide, &wide), 0);
    EXPECT_FALSE(leave_bound_cpus());
    cpu_set_t after;
    CPU_ZERO(&after);
    ASSERT_EQ(pthread_getaffinity_np(pthread_self(), sizeof after, &after), 0);
    EXPECT_TRUE(CPU_EQUAL(&after, &wide));
  }).join();
}

}  // namespace
}  // namespace mpsb
