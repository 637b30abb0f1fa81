// The fatal-error note naming ranks on this host that died first: a running
// peer is not named, a zombie (killed, not yet collected) and a collected one are.
#include <gtest/gtest.h>

#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <string>

#include "node_peers.hpp"

namespace mpsb {
namespace {

pid_t spawn_sleeper() {
  const pid_t pid = ::fork();
  if (pid == 0) {
    for (;;) ::pause();
  }
  return pid;
}

std::string gone(int rank, pid_t pid) {
  return "rank " + std::to_string(rank) + " (pid " + std::to_string(pid) + ") on this host had already exited";
}

TEST(NodePeers, NamesPeersThatExitedIncludingZombiesAndNeverItself) {
  const pid_t running = spawn_sleeper();
  const pid_t killed = spawn_sleeper();
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
  EXPECT_EQ(exited_node_peers(), gone(1, running) + "; " + gone(2, killed));

  ASSERT_EQ(::waitpid(killed, nullptr, 0), killed);
  set_node_peers({});
  EXPECT_EQ(exited_node_peers(), "");
}

}  // namespace
}  // namespace mpsb
