// --allreduce: the host-side collective a data-parallel step does through MPI
// when ranks share a GPU (NCCL allows one communicator rank per GPU). One
// MPI_Allreduce (MPI_SUM of doubles) over the active ranks after each
// iteration; its time is kept apart from the kernel's and every reduced value
// is checked against what the ranks contributed.
#pragma once

#include <mpi.h>

#include <cstdint>
#include <string>
#include <vector>

namespace mpsb {

class HostAllreduce {
 public:
  // Collective over `active` (the configuration's active ranks).
  HostAllreduce(MPI_Comm active, std::int64_t bytes);

  // One call; returns its wall time in seconds. Buffer preparation and the
  // check run outside the timed part. The receive buffer is poisoned (NaN)
  // and checked in full on the first call and every kFullCheckEvery-th; the
  // calls between poison and check about 1024 strided elements whose offset
  // moves by one each call, so the host work around the collective stays
  // small (a full pass over 4 MiB costs about as much as the reduction) while
  // every element is still checked, and a collective that writes nothing
  // fails at once.
  double reduce_and_check();
  static constexpr std::int64_t kFullCheckEvery = 64;

  std::int64_t checked() const { return checked_; }
  std::int64_t wrong() const { return wrong_; }
  const std::string& first_problem() const { return first_problem_; }

  // What every element must hold after the sum: rank r contributes
  // (r + 1) + (i mod 5) at index i, so the sum over p ranks is
  // p (p + 1) / 2 + p (i mod 5), exact in double.
  static double expected(std::int64_t index, int ranks);
  static double contribution(std::int64_t index, int rank);

 private:
  MPI_Comm comm_;
  int rank_ = 0, ranks_ = 1;
  std::vector<double> send_, receive_, expected_;
  std::int64_t calls_ = 0;
  void check(std::size_t i);
  std::int64_t checked_ = 0, wrong_ = 0;
  std::string first_problem_;
};

}  // namespace mpsb
