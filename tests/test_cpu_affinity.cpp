// WideAffinity (issue 28): untimed work on every CPU, the launcher's binding back before timing.
#include <gtest/gtest.h>

#include <pthread.h>
#include <sched.h>

#include <thread>

#include "runtime/cpu_affinity.hpp"

namespace mpsb {
namespace {

TEST(WideAffinity, WidensAOneCoreBindingAndRestoresIt) {
  const int all = allowed_cpus();
  if (all < 2) GTEST_SKIP() << "one CPU: nothing to widen";
  std::thread([all] {  // a thread of its own: the test's main thread keeps its mask
    cpu_set_t one;
    CPU_ZERO(&one);
    cpu_set_t current;
    CPU_ZERO(&current);
    ASSERT_EQ(pthread_getaffinity_np(pthread_self(), sizeof current, &current), 0);
    int first = 0;
    while (!CPU_ISSET(first, &current)) ++first;
    CPU_SET(first, &one);
    ASSERT_EQ(pthread_setaffinity_np(pthread_self(), sizeof one, &one), 0);  // as mpirun --bind-to core
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
    EXPECT_TRUE(CPU_EQUAL(&after, &one));
  }).join();
}

}  // namespace
}  // namespace mpsb
