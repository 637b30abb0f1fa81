// How each configuration is measured (README "Measurement protocol"): what
// the measuring options set, read by the protocol (measure.hpp) and recorded
// in every results file's context.
#pragma once

#include <cstdint>
#include <optional>

namespace mpsb {

struct MeasureSettings {
  double min_time_s = 0.25;
  int repetitions = 5;  // with max_noise: the minimum
  // At one rank per GPU, the baseline of every speedup and the A/A check, one process on one host core
  // carries the figure (at k ranks, k cores average out): this many repetitions there; nullopt: repetitions.
  std::optional<int> one_rank_repetitions;
  std::uint64_t seed = 1;
  double warmup_time_s = 0.2;
  std::optional<double> max_noise;   // fraction; nullopt: a fixed repetition count
  std::optional<double> max_time_s;  // repetition budget per configuration (with max_noise)
  bool discard_throttled = false;
  int throttle_retries = 3;          // dropped repetitions per configuration, at most
  double clock_threshold = 0.9;      // fraction of the reference SM clock
  // The host CPUs (cpu_watch.hpp): a probe more than 1 + cpu_threshold times its thread's fastest marks
  // a repetition CPU-slowed; with discard_cpu_slowed it is dropped and taken again, at most cpu_retries times.
  double cpu_threshold = 0.3;
  bool discard_cpu_slowed = false;
  int cpu_retries = 3;
  std::optional<std::int64_t> allreduce_bytes;  // --allreduce: a host MPI_Allreduce after each iteration
  // The shortest span whose energy each configuration meters: the kept repetitions, after an extra
  // stretch of the same work where they are shorter (0: the kept repetitions alone).
  double energy_min_span_s = 0;
  bool green_contexts = false;  // each GPU instance in its own green context (the mode's green_contexts)
};

}  // namespace mpsb
