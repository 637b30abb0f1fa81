#include "runtime/turns.hpp"

#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "runtime/check.hpp"
#include "runtime/mpi_context.hpp"

namespace mpsb {
namespace {

// A broadcast whose waiting ranks sleep: while another job works they must not spin on its cores.
void sleeping_bcast(int* value, MPI_Comm comm) {
  MPI_Request request = MPI_REQUEST_NULL;
  MPSB_MPI(MPI_Ibcast(value, 1, MPI_INT, 0, comm, &request));
  wait_asleep(request);
}

std::string failure(const std::string& path, const std::string& what) {
  return error_identity() + ": --turns " + path + ": " + what;
}

}  // namespace

Turns::Turns(MPI_Comm world, int rank, const std::string& path)
    : world_(world), rank_(rank), enabled_(!path.empty()), path_(path) {
  if (!enabled_ || rank_ != 0) return;
  sockaddr_un address{};
  address.sun_family = AF_UNIX;
  if (path.size() >= sizeof(address.sun_path)) {
    throw FatalError(failure(path, "longer than a Unix socket path can be (" +
                                       std::to_string(sizeof(address.sun_path) - 1) + " bytes)"));
  }
  std::memcpy(address.sun_path, path.c_str(), path.size() + 1);
  fd_ = ::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd_ < 0) throw FatalError(failure(path, std::string("socket: ") + std::strerror(errno)));
  if (::connect(fd_, reinterpret_cast<const sockaddr*>(&address), sizeof(address)) != 0) {
    const int e = errno;
    ::close(fd_);
    fd_ = -1;
    throw FatalError(failure(path, std::string("cannot reach the sweep's turns (") + std::strerror(e) +
                                       "): --turns is for mpsbench-sweep's own jobs, whose rank 0 runs on the "
                                       "sweep's node (mpsbench-sweep --turns off runs them one at a time)"));
  }
}

Turns::~Turns() {
  if (fd_ >= 0) ::close(fd_);  // the sweep reads the end of the connection as this job's end
}

void Turns::send(const std::string& line) {
  std::size_t sent = 0;
  while (sent < line.size()) {
    const ssize_t n = ::send(fd_, line.data() + sent, line.size() - sent, MSG_NOSIGNAL);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) throw FatalError(failure(path_, std::string("the sweep is gone (") + std::strerror(errno) + ")"));
    sent += static_cast<std::size_t>(n);
  }
}

std::string Turns::receive_line() {
  std::string line;
  char c = 0;
  while (true) {
    const ssize_t n = ::recv(fd_, &c, 1, 0);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) throw FatalError(failure(path_, std::string("reading the sweep: ") + std::strerror(errno)));
    if (n == 0) throw FatalError(failure(path_, "the sweep closed the connection while this job waited its turn"));
    if (c == '\n') return line;
    if (line.size() > 64) throw FatalError(failure(path_, "the sweep's answer is not a line of this protocol"));
    line.push_back(c);
  }
}

void Turns::ask(MPI_Comm comm, long config, long step) {
  int ok = 1;
  if (rank_ == 0) {
    send("want " + std::to_string(config) + " " + std::to_string(step) + "\n");
    const std::string answer = receive_line();
    if (answer != "go") throw FatalError(failure(path_, "the sweep answered \"" + answer + "\", not \"go\""));
    holding_ = true;
  }
  sleeping_bcast(&ok, comm);
}

void Turns::take(long config) {
  if (enabled_) ask(world_, config, 0);
}

void Turns::pass(MPI_Comm comm, long config, long step) {
  if (!enabled_) return;
  int comm_rank = 0;
  MPSB_MPI(MPI_Comm_rank(comm, &comm_rank));
  if ((comm_rank == 0) != (rank_ == 0)) {
    throw FatalError(failure(path_, "a turn passed among ranks without world rank 0, which talks to the sweep"));
  }
  give();
  ask(comm, config, step);
}

void Turns::give() {
  if (!enabled_ || rank_ != 0 || !holding_) return;
  holding_ = false;
  send("done\n");
}

}  // namespace mpsb
