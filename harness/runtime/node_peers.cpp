#include "runtime/node_peers.hpp"

#include <signal.h>
#include <unistd.h>

#include <cerrno>
#include <fstream>
#include <string>

namespace mpsb {
namespace {

std::vector<NodePeer>& recorded_peers() {
  static std::vector<NodePeer> peers;
  return peers;
}

// A killed rank stays a zombie until Open MPI's daemon collects it, so a
// process that exists but is in state Z counts as gone.
bool has_exited(pid_t pid) {
  if (::kill(pid, 0) != 0) return errno == ESRCH;
  std::ifstream stat("/proc/" + std::to_string(pid) + "/stat");
  std::string fields;
  if (!std::getline(stat, fields)) return false;
  // "pid (comm) S ...": the state follows the last ')', as comm may hold one.
  const auto close = fields.rfind(')');
  return close != std::string::npos && close + 2 < fields.size() && fields[close + 2] == 'Z';
}

}  // namespace

void set_node_peers(std::vector<NodePeer> peers) { recorded_peers() = std::move(peers); }

std::string exited_node_peers() {
  std::string text;
  const pid_t self = ::getpid();
  for (const NodePeer& peer : recorded_peers()) {
    if (peer.pid == self || peer.pid <= 0 || !has_exited(peer.pid)) continue;
    if (!text.empty()) text += "; ";
    text += "rank " + std::to_string(peer.world_rank) + " (pid " + std::to_string(peer.pid) +
            ") on this host had already exited";
  }
  return text;
}

std::string exited_node_peers_suffix() {
  const std::string gone = exited_node_peers();
  return gone.empty() ? gone : "; " + gone;
}

}  // namespace mpsb
