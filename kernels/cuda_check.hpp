// Checked CUDA and cuBLAS calls. Every CUDA and cuBLAS call goes through one
// of these macros; a failure throws FatalError naming the call, the error,
// the source location and this process's identity (its rank and host, where
// the harness set them). The programs turn a FatalError into their fatal exit
// (mpsbench: MPI_Abort, harness/runtime/check.hpp), so no rank is left waiting.
// The lowest layer: the kernels, the harness and the benchmark tools share it.
#pragma once

#include <cstdint>
#include <optional>
#include <stdexcept>
#include <string>

#include <cublas_api.h>
#include <cuda_runtime_api.h>

namespace mpsb {

class FatalError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// Out of device or host memory while setting up a workload: the harness
// records that configuration as failed and goes on with the next one instead
// of aborting the job (too many ranks x too large a size is a result, not a bug).
class OutOfMemoryError : public FatalError {
 public:
  using FatalError::FatalError;
};

// Exit status of a fatal runtime error (and of mpsbench's --timeout).
constexpr int kExitFatal = 3;

// Set once after MPI_Init so every error message can say where it happened.
void set_error_identity(int world_rank, const std::string& host);
// "rank 3 on host gpu01"
std::string error_identity();

// This process's MPS pinned device memory limit (CUDA_MPS_PINNED_DEVICE_MEM_LIMIT,
// where it applies), set once its GPU context exists; none clears it. Every
// out-of-memory error names it from then on: such a client runs out at the limit,
// long before the GPU is full.
void set_pinned_memory_limit(std::optional<std::uint64_t> bytes);
// " (this MPS client's pinned device memory limit is 2.00 GiB)", or "" without one.
std::string pinned_memory_limit_note();

[[noreturn]] void throw_fatal(const std::string& call, const std::string& error, const char* file, int line);
// The same message as throw_fatal, thrown as OutOfMemoryError.
[[noreturn]] void throw_out_of_memory(const std::string& call, const std::string& error, const char* file, int line);
void check_cuda(cudaError_t status, const char* call, const char* file, int line);
void check_cublas(cublasStatus_t status, const char* call, const char* file, int line);

}  // namespace mpsb

#define MPSB_CUDA(call) ::mpsb::check_cuda((call), #call, __FILE__, __LINE__)
#define MPSB_CUBLAS(call) ::mpsb::check_cublas((call), #call, __FILE__, __LINE__)
// After a kernel launch: reports launch-configuration errors at the launch site.
#define MPSB_CUDA_LAUNCH() ::mpsb::check_cuda(cudaGetLastError(), "kernel launch", __FILE__, __LINE__)
