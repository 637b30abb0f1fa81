// --mode green: the first rank of each GPU runs the k instances of a
// configuration on k threads, as in --mode streams, but each instance in its
// own CUDA green context holding a disjoint 1/k of the GPU's SMs: the
// in-process counterpart of mps-qos (CUDA_MPS_ACTIVE_THREAD_PERCENTAGE = 100/k).
//
// The driver entry points (CUDA 12.4+) are looked up at run time through the
// CUDA runtime (cudaGetDriverEntryPointByVersion), never linked: the tool must
// still start on a host without libcuda (--device cpu) and on a driver older
// than 12.4, where only --mode green fails, with one line naming the call.
#pragma once

#include <memory>
#include <vector>

#include <cuda_runtime_api.h>

struct CUgreenCtx_st;
struct CUctx_st;

namespace mpsb {

// What a GPU's SM resource allows (cuDeviceGetDevResource, CU_DEV_RESOURCE_TYPE_SM).
struct SmGranularity {
  int min_partition = 1;  // sm.minSmPartitionSize
  int alignment = 1;      // sm.smCoscheduledAlignment: a partition's SM count is a multiple of it
};

// The granularity cuDevSmResourceSplitByCount works in: what the device
// reports, but at least what the driver documentation gives for its compute
// capability (9.0+: at least 8 SMs, multiples of 8; 8.x: 4 and 2; 6.x, 7.x:
// 2 and 2), since the split rounds a request up to that.
SmGranularity split_granularity(SmGranularity reported, int compute_capability_major);

// SMs of each of `instances` equal partitions of `sms`: all of them for one
// instance (no split), else floor(sms / instances) rounded down to a multiple of
// the alignment; 0 when that is below the minimum partition (they do not fit).
// H100 SXM (132 SMs, 8 and 8): 2 -> 64, 4 -> 32, 8 -> 16, 16 -> 8, 32 -> 0.
int green_partition_sm_count(int sms, int instances, SmGranularity granularity);

// The minimum counts to try with cuDevSmResourceSplitByCount, largest first:
// green_partition_sm_count, then one alignment step less each time, down to
// the minimum partition. The driver rounds a count up to its own granularity
// and may build fewer groups than asked where the GPU's topology does not
// allow them, so the first count that yields `instances` groups is used.
// Empty for one instance (no split) and where the partitions do not fit.
std::vector<int> green_split_attempts(int sms, int instances, SmGranularity granularity);

// One split of a GPU's SMs into `instances` disjoint groups. One call splits
// them all: separate splits of the same device may hand out the same SMs.
// Built on the rank's own thread before its instance threads start; only read
// after. Throws FatalError naming the failed call (the driver lacks green
// contexts, or cannot make that many partitions).
class GreenPartition {
 public:
  GreenPartition(int gpu_ordinal, int instances);
  ~GreenPartition();
  GreenPartition(const GreenPartition&) = delete;
  GreenPartition& operator=(const GreenPartition&) = delete;

  int instances() const;
  int device_sm_count() const;          // the whole GPU
  int group_sm_count(int instance) const;  // what the split gave this group
  SmGranularity granularity() const;    // split_granularity of the device

 private:
  friend class GreenContext;
  struct Groups;
  std::unique_ptr<Groups> groups_;
};

// Instance `instance`'s green context over its group of `partition`, current
// on the calling thread from construction until destruction (which makes the
// previous context current again, then destroys the green context). Runtime
// API calls of that thread run in it: a stream created meanwhile
// (cudaStreamCreate*) belongs to it, so every kernel and cuBLAS call on that
// stream runs on its SMs only. Streams and events created under it must be
// destroyed before it is. Out of memory throws OutOfMemoryError, any other
// failure FatalError naming the call.
class GreenContext {
 public:
  GreenContext(const GreenPartition& partition, int instance);
  ~GreenContext();
  GreenContext(const GreenContext&) = delete;
  GreenContext& operator=(const GreenContext&) = delete;

  // The SMs it actually holds (cuGreenCtxGetDevResource).
  int sm_count() const { return sm_count_; }
  // Whether `stream` belongs to this green context (cuStreamGetGreenCtx).
  bool holds_stream(cudaStream_t stream) const;

 private:
  CUgreenCtx_st* green_ = nullptr;
  CUctx_st* previous_ = nullptr;
  int sm_count_ = 0;
};

}  // namespace mpsb
