#include "measure/clock.hpp"

#include <chrono>
#include <limits>

#include "runtime/check.hpp"

namespace mpsb {

double now_seconds() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

double clock_offset_to_root(const MpiContext& ctx, const std::vector<std::string>& hosts) {
  constexpr int kPings = 16;
  constexpr int kTag = 7301;
  double offset = 0;
  for (int r = 1; r < ctx.size; ++r) {
    if (hosts[r] == hosts[0]) continue;
    if (ctx.rank == 0) {
      for (int i = 0; i < kPings; ++i) {
        char ping = 0;
        MPSB_MPI(MPI_Recv(&ping, 1, MPI_CHAR, r, kTag, ctx.world, MPI_STATUS_IGNORE));
        const double t = now_seconds();
        MPSB_MPI(MPI_Send(&t, 1, MPI_DOUBLE, r, kTag, ctx.world));
      }
    } else if (ctx.rank == r) {
      double best_round_trip = std::numeric_limits<double>::infinity();
      for (int i = 0; i < kPings; ++i) {
        char ping = 0;
        double root_time = 0;
        const double sent = now_seconds();
        MPSB_MPI(MPI_Send(&ping, 1, MPI_CHAR, 0, kTag, ctx.world));
        MPSB_MPI(MPI_Recv(&root_time, 1, MPI_DOUBLE, 0, kTag, ctx.world, MPI_STATUS_IGNORE));
        const double received = now_seconds();
        if (received - sent < best_round_trip) {
          best_round_trip = received - sent;
          offset = root_time - 0.5 * (sent + received);
        }
      }
    }
  }
  return offset;
}

}  // namespace mpsb
