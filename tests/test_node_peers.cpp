// The fatal-error note naming ranks on this host that died first: a running
// peer is not named, a zombie (killed, not yet collected) and a collected one are.
#include <gtest/gtest.h>

#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <string>
#include <vector>

#include "runtime/node_peers.hpp"

namespace mpsb {
namespace {

pid_t spawn_sleeper() {
  const pid_t pid = ::fork();
  if (pid == 0) {
    for (;;) ::pause();
  }
  return pid;
}

// Kills and collects the children the test has not collected itself, however
// it ends (a failed ASSERT returns early), so no sleeper outlives the test.
struct Children {
  std::vector<pid_t> uncollected;
  void collected(pid_t pid) {
    uncollected.erase(std::remove(uncollected.begin(), uncollected.end(), pid), uncollected.end());
  }
  ~Children() {
    for (const pid_t pid : uncollected) {
      ::kill(pid, SIGKILL);
      ::waitpid(pid, nullptr, 0);
    }
  }
};

std::string gone(int rank, pid_t pid) {
  return "rank " + std::to_string(rank) + " (pid " + std::to_string(pid) + ") on this host had already exited";
}

TEST(NodePeers, NamesPeersThatExitedIncludingZombiesAndNeverItself) {
  const pid_t running = spawn_sleeper();
  const pid_t killed = spawn_sleeper();
  Children children;
  for (const pid_t pid : {running, killed}) {
    if (pid > 0) children.uncollected.push_back(pid);
  }
  ASSERT_GT(running, 0);
  ASSERT_GT(killed, 0);
  set_node_peers({{0, ::getpid()}, {1, running}, {2, killed}});
  EXPECT_EQ(exited_node_peers(), "");
  EXPECT_EQ(exited_node_peers_suffix(), "");

  // Killed but not collected: a zombie, as a rank is until Open MPI's daemon reaps it.
  ASSERT_EQ(::kill(killed, SIGKILL), 0);
  siginfo_t info{};
  ASSERT_EQ(::waitid(P_PID, static_cast<id_t>(killed), &info, WEXITED | WNOWAIT), 0);
  EXPECT_EQ(exited_node_peers(), gone(2, killed));
  EXPECT_EQ(exited_node_peers_suffix(), "; " + gone(2, killed));

  // Collected: the process id no longer exists.
  ASSERT_EQ(::kill(running, SIGKILL), 0);
  ASSERT_EQ(::waitpid(running, nullptr, 0), running);
  children.collected(running);
  EXPECT_EQ(exited_node_peers(), gone(1, running) + "; " + gone(2, killed));

  ASSERT_EQ(::waitpid(killed, nullptr, 0), killed);
  children.collected(killed);
  set_node_peers({});
  EXPECT_EQ(exited_node_peers(), "");
}

}  // namespace
}  // namespace mpsb
