#include "measure/host_allreduce.hpp"

#include <algorithm>
#include <cmath>
#include <limits>

#include "measure/clock.hpp"
#include "runtime/check.hpp"

namespace mpsb {

double HostAllreduce::contribution(std::int64_t index, int rank) { return (rank + 1) + static_cast<double>(index % 5); }

double HostAllreduce::expected(std::int64_t index, int ranks) {
  const double p = ranks;
  return p * (p + 1) / 2 + p * static_cast<double>(index % 5);
}

HostAllreduce::HostAllreduce(MPI_Comm active, std::int64_t bytes) : comm_(active) {
  MPSB_MPI(MPI_Comm_rank(comm_, &rank_));
  MPSB_MPI(MPI_Comm_size(comm_, &ranks_));
  const auto count = static_cast<std::size_t>(bytes / 8);
  send_.resize(count);
  receive_.resize(count);
  expected_.resize(count);
  for (std::size_t i = 0; i < count; ++i) {
    send_[i] = contribution(static_cast<std::int64_t>(i), rank_);
    expected_[i] = expected(static_cast<std::int64_t>(i), ranks_);
  }
}

void HostAllreduce::check(std::size_t i) {
  if (receive_[i] == expected_[i]) return;
  if (wrong_ == 0) {
    first_problem_ = "MPI_Allreduce element " + std::to_string(i) + " is " + std::to_string(receive_[i]) +
                     ", expected " + std::to_string(expected_[i]) + " over " + std::to_string(ranks_) + " ranks";
  }
  ++wrong_;
}

double HostAllreduce::reduce_and_check() {
  const std::size_t n = receive_.size();
  const bool full = calls_ % kFullCheckEvery == 0;
  const std::size_t stride = full ? 1 : std::max<std::size_t>(1, n / 1024);
  const std::size_t offset = full ? 0 : static_cast<std::size_t>(calls_) % stride;
  ++calls_;
  // A collective that wrote nothing must not pass on an earlier call's sums.
  const double nan = std::numeric_limits<double>::quiet_NaN();
  for (std::size_t i = offset; i < n; i += stride) receive_[i] = nan;
  receive_[n - 1] = nan;
  const double start = now_seconds();
  MPSB_MPI(MPI_Allreduce(send_.data(), receive_.data(), static_cast<int>(n), MPI_DOUBLE, MPI_SUM, comm_));
  const double seconds = now_seconds() - start;
  std::int64_t looked = 0;
  for (std::size_t i = offset; i < n; i += stride, ++looked) check(i);
  if ((n - 1 - offset) % stride != 0) {
    check(n - 1);
    ++looked;
  }
  checked_ += looked;
  return seconds;
}

}  // namespace mpsb
