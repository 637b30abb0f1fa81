// small-kernels: a CUDA program too small to fill a modern GPU, for farming
// with `mpsbench-sweep --app` (examples/README.md).
//
// Purpose: the textbook case for MPS. Each of 10,000 launches runs a
// dependent chain of integer arithmetic on a small array (by default 64
// blocks of 256 threads: 64 of an H100's 132 SMs, 8 warps on each, so most of
// the GPU stays idle), and the host synchronises after every launch, as an
// application with a time step and a host decision per step does. Several
// copies under time slicing take turns on the whole GPU and pay a context
// switch at every turn; under MPS their kernels run side by side.
//
// Work per launch: every element advances `steps` steps of the 32-bit linear
// congruential generator x <- a*x + c (mod 2^32): `steps` dependent IMADs per
// thread. Bytes: the array (4 bytes per element) read and written once per
// launch. Verification is exact and covers every element: the composition of
// launches x steps affine maps is computed on the CPU by repeated squaring
// (integers, so there is no rounding to tolerate).
//
// Default length, measured on one H100 SXM (driver 580, CUDA 13.0): about
// 125 us per launch, of which about 10 us are launch and synchronisation
// (--steps 1 leaves only those), so 10,000 launches take about 1.25 s alone:
// long against the ~0.3 s a process needs to create its CUDA context. Other
// GPUs differ; --launches scales the run. Farmed there (mpsbench-sweep --app,
// 2026-11-24), a run took 1.58 s with process start; 2 / 4 / 8 copies at once
// took 5.4 / 10.7 / 21.3 s each under time slicing and 1.50 / 2.56 / 4.79 s
// each under MPS (docs/workshop.md, exercise 8).
// Limits: elements up to 2^26, launches x steps up to 2^62.
//
// Output: one line, e.g.
//   small-kernels: launches=10000 elements=16384 steps=50000 seconds=1.234 result=ok mismatches=0
// Exit status: 0 verified, 1 a mismatch, 2 bad input (one line), 3 a CUDA
// error (one line naming the call). It uses device 0 of what
// CUDA_VISIBLE_DEVICES shows (the sweep gives each copy one GPU).
#include <cuda_runtime.h>

#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

namespace {

constexpr std::uint32_t kMultiplier = 1664525u;  // Numerical Recipes' LCG
constexpr std::uint32_t kIncrement = 1013904223u;
constexpr int kThreads = 256;

struct Options {
  long long launches = 10000;  // about 1.2 s alone on an H100 (above)
  long long elements = 16384;
  long long steps = 50000;
};

struct Affine {  // x -> a*x + c (mod 2^32)
  std::uint32_t a, c;
};

Affine then(Affine first, Affine second) {  // second after first
  return {second.a * first.a, second.a * first.c + second.c};
}

Affine power(Affine step, unsigned long long n) {
  Affine result{1u, 0u};
  while (n > 0) {
    if (n & 1u) result = then(result, step);
    step = then(step, step);
    n >>= 1u;
  }
  return result;
}

std::uint32_t start_value(long long i) { return static_cast<std::uint32_t>(i) * 2654435761u + 12345u; }

__global__ void advance(std::uint32_t* x, int n, int steps, std::uint32_t a, std::uint32_t c) {
  const int i = static_cast<int>(blockIdx.x) * blockDim.x + static_cast<int>(threadIdx.x);
  if (i >= n) return;
  std::uint32_t v = x[i];
  for (int s = 0; s < steps; ++s) v = a * v + c;
  x[i] = v;
}

[[noreturn]] void bad_input(const std::string& message) {
  std::fprintf(stderr, "small-kernels: error: %s\n", message.c_str());
  std::exit(2);
}

void check(cudaError_t status, const char* call) {
  if (status != cudaSuccess) {
    std::fprintf(stderr, "small-kernels: fatal: %s failed: %s\n", call, cudaGetErrorString(status));
    std::exit(3);
  }
}

long long parse_count(const std::string& flag, const char* text, long long low, long long high) {
  char* end = nullptr;
  const long long value = std::strtoll(text, &end, 10);
  if (*text == '\0' || *end != '\0' || value < low || value > high) {
    bad_input(flag + ": '" + text + "' is not an integer in [" + std::to_string(low) + ", " + std::to_string(high) +
              "]");
  }
  return value;
}

Options parse(int argc, char** argv) {
  Options o;
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    const auto eq = arg.find('=');
    const std::string flag = arg.substr(0, eq);
    auto value = [&]() -> const char* {
      if (eq != std::string::npos) return argv[i] + eq + 1;
      if (i + 1 >= argc) bad_input(flag + ": missing value");
      return argv[++i];
    };
    if (flag == "--launches") {
      o.launches = parse_count(flag, value(), 1, 100000000);
    } else if (flag == "--elements") {
      o.elements = parse_count(flag, value(), 1, 1LL << 26);
    } else if (flag == "--steps") {
      o.steps = parse_count(flag, value(), 1, 1000000000);
    } else if (flag == "-h" || flag == "--help") {
      std::printf("usage: small-kernels [--launches N] [--elements N] [--steps N]\n"
                  "  many small kernel launches, each followed by a host synchronisation\n"
                  "  (defaults: --launches 10000 --elements 16384 --steps 50000: about 1.2 s alone on\n"
                  "  an H100; --steps 1 leaves only launch and synchronisation latency); examples/README.md\n");
      std::exit(0);
    } else {
      bad_input("unknown option '" + arg + "'");
    }
  }
  return o;
}

}  // namespace

int main(int argc, char** argv) {
  const Options o = parse(argc, argv);
  const int n = static_cast<int>(o.elements);
  std::vector<std::uint32_t> host(static_cast<std::size_t>(n));
  for (int i = 0; i < n; ++i) host[static_cast<std::size_t>(i)] = start_value(i);

  std::uint32_t* device = nullptr;
  cudaStream_t stream = nullptr;
  check(cudaSetDevice(0), "cudaSetDevice(0)");
  check(cudaStreamCreate(&stream), "cudaStreamCreate");
  check(cudaMalloc(&device, sizeof(std::uint32_t) * host.size()), "cudaMalloc");
  check(cudaMemcpy(device, host.data(), sizeof(std::uint32_t) * host.size(), cudaMemcpyHostToDevice), "cudaMemcpy");

  const unsigned blocks = static_cast<unsigned>((n + kThreads - 1) / kThreads);
  const auto started = std::chrono::steady_clock::now();
  for (long long l = 0; l < o.launches; ++l) {
    advance<<<blocks, kThreads, 0, stream>>>(device, n, static_cast<int>(o.steps), kMultiplier, kIncrement);
    check(cudaGetLastError(), "advance<<<>>>");
    check(cudaStreamSynchronize(stream), "cudaStreamSynchronize");  // the host looks at every step
  }
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();

  std::vector<std::uint32_t> result(host.size());
  check(cudaMemcpy(result.data(), device, sizeof(std::uint32_t) * result.size(), cudaMemcpyDeviceToHost),
        "cudaMemcpy");
  check(cudaFree(device), "cudaFree");
  check(cudaStreamDestroy(stream), "cudaStreamDestroy");

  const Affine all = power({kMultiplier, kIncrement}, static_cast<unsigned long long>(o.launches) *
                                                          static_cast<unsigned long long>(o.steps));
  long long mismatches = 0;
  for (std::size_t i = 0; i < host.size(); ++i) {
    if (result[i] != all.a * host[i] + all.c) ++mismatches;
  }
  std::printf("small-kernels: launches=%lld elements=%lld steps=%lld seconds=%.3f result=%s mismatches=%lld\n",
              o.launches, o.elements, o.steps, seconds, mismatches == 0 ? "ok" : "wrong", mismatches);
  return mismatches == 0 ? 0 : 1;
}
