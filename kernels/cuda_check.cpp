#include "cuda_check.hpp"

#include <cublas_v2.h>

#include <cstdio>

namespace mpsb {
namespace {
struct Identity {
  int rank = -1;
  std::string host = "?";
};
Identity& identity() {
  static Identity id;
  return id;
}
// Set before any workload thread exists (open_gpu), read-only afterwards.
std::optional<std::uint64_t>& pinned_limit() {
  static std::optional<std::uint64_t> bytes;
  return bytes;
}
// Source paths are long in build logs; the file name is enough to find the call.
const char* base_name(const char* path) {
  const char* base = path;
  for (const char* p = path; *p != '\0'; ++p) {
    if (*p == '/') base = p + 1;
  }
  return base;
}
}  // namespace

void set_error_identity(int world_rank, const std::string& host) {
  identity().rank = world_rank;
  identity().host = host;
}

std::string error_identity() {
  return "rank " + std::to_string(identity().rank) + " on host " + identity().host;
}

namespace {
std::string failure_text(const std::string& call, const std::string& error, const char* file, int line) {
  return error_identity() + ": " + call + " failed: " + error + " (" + base_name(file) + ":" +
         std::to_string(line) + ")";
}
}  // namespace

void throw_fatal(const std::string& call, const std::string& error, const char* file, int line) {
  throw FatalError(failure_text(call, error, file, line));
}

void set_pinned_memory_limit(std::optional<std::uint64_t> bytes) { pinned_limit() = bytes; }

std::string pinned_memory_limit_note() {
  if (!pinned_limit()) return "";
  char size[64];
  std::snprintf(size, sizeof size, "%.2f GiB", static_cast<double>(*pinned_limit()) / (1024.0 * 1024 * 1024));
  return std::string(" (this MPS client's pinned device memory limit is ") + size + ")";
}

void throw_out_of_memory(const std::string& call, const std::string& error, const char* file, int line) {
  throw OutOfMemoryError(failure_text(call, error + pinned_memory_limit_note(), file, line));
}

void check_cuda(cudaError_t status, const char* call, const char* file, int line) {
  if (status == cudaSuccess) return;
  if (status == cudaErrorMemoryAllocation) {
    throw_out_of_memory(call, std::string(cudaGetErrorString(status)) + " [" + cudaGetErrorName(status) + "]",
                        file, line);
  }
  throw_fatal(call, std::string(cudaGetErrorString(status)) + " [" + cudaGetErrorName(status) + "]", file,
              line);
}

void check_cublas(cublasStatus_t status, const char* call, const char* file, int line) {
  if (status == CUBLAS_STATUS_SUCCESS) return;
  if (status == CUBLAS_STATUS_ALLOC_FAILED) {
    throw_out_of_memory(call, std::string(cublasGetStatusString(status)) + " [" + cublasGetStatusName(status) + "]",
                        file, line);
  }
  throw_fatal(call, std::string(cublasGetStatusString(status)) + " [" + cublasGetStatusName(status) + "]", file,
              line);
}

}  // namespace mpsb
