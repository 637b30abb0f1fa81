// What Linux says about a thread's CPU time lost to others: the steal time of
// the CPU it runs on (/proc/stat, column 8 of the "cpuN" line: time the
// hypervisor ran another guest on this vCPU, in ticks of sysconf(_SC_CLK_TCK))
// and its own run-queue wait (/proc/thread-self/schedstat, second field, ns).
// Read around every repetition by its timed threads (cpu_watch.hpp). The
// parsers take text, so the tests feed them; anything unreadable gives no
// figure and a reason, never a guess.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>

namespace mpsb {

// The steal column of every "cpuN" line of /proc/stat's text, by N (the "cpu" total line is not one);
// a line with fewer than eight numbers, or any of its first eight not a number, is left out.
std::map<int, std::uint64_t> steal_ticks_by_cpu(const std::string& proc_stat);
// The second field of /proc/<pid>/task/<tid>/schedstat ("run_ns wait_ns timeslices"); nullopt when malformed.
std::optional<std::uint64_t> run_delay_ns(const std::string& schedstat);

// The counters at one moment, for the calling thread.
struct CpuCounterSnapshot {
  int cpu = -1;                               // sched_getcpu(); -1 where it failed
  std::map<int, std::uint64_t> steal_ticks;   // empty: unreadable
  std::optional<std::uint64_t> run_delay_ns;  // nullopt: unreadable
  std::string problem;                        // what could not be read, else empty
};

// `proc_root`: /proc, or a test's stand-in (MPSBENCH_PROC_ROOT).
CpuCounterSnapshot read_cpu_counters(const std::string& proc_root);

// Between two snapshots of one thread: the steal time of the CPU it was on (the larger of the two CPUs'
// where it moved) and its run-queue wait, in seconds; nullopt (and `problem`) where a snapshot lacks them.
struct CpuLoss {
  std::optional<double> steal_s;
  std::optional<double> run_delay_s;
  std::string problem;
};
CpuLoss cpu_loss_between(const CpuCounterSnapshot& before, const CpuCounterSnapshot& after, long ticks_per_second);

}  // namespace mpsb
