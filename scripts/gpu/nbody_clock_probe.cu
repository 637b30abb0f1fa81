// On the GPU machine (built by nbody-clock.sh, not by CMake): is the fp32
// nbody figure at N = 262144 limited by the SM clock? Runs the landed force
// kernel (first fp32 shape of nbody_launch.hpp, the shape the suite picks at
// this N) for SECONDS and, right after each launch, measures the clock the
// SMs run at: clock64() cycles over %globaltimer nanoseconds, a 2 ms probe on
// every SM, then a synchronization (so launches are ~2 ms apart, and the GPU
// is busy with the force kernel ~93% of the time). nvidia-smi reports the
// requested clock; this one is what the SMs got. Prints one line per 0.5 s
// window: GFLOP/s of the force kernel alone (20 flops per interaction, CUDA
// events), mean and lowest launch, and the measured clock, mean over the
// window and lowest launch (each launch's figure is the mean over the SMs).
// The bodies are uniform in a cube, not make_bodies(): timing does not depend
// on them, and the probe then needs neither nbody_cpu.cpp nor MPI.
// Usage: nbody_clock_probe [SECONDS (default 10)]
#include <cuda_runtime.h>

#include <array>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <random>
#include <tuple>
#include <vector>

#include "nbody_kernels.cuh"

namespace {
using namespace mpsb::nbody;
using gpu::Vec4;

void check(cudaError_t e, const char* call) {
  if (e == cudaSuccess) return;
  std::fprintf(stderr, "nbody_clock_probe: %s: %s\n", call, cudaGetErrorString(e));
  std::exit(1);
}
#define CHECK(call) check((call), #call)

// Thread 0 of each block (one per SM) spins for spin_ns of global time.
__global__ void clock_probe(long long* out, unsigned long long spin_ns) {
  if (threadIdx.x != 0) return;
  unsigned long long t0 = 0, t1 = 0;
  const long long c0 = clock64();
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t0));
  do {
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t1));
  } while (t1 - t0 < spin_ns);
  const long long c1 = clock64();
  out[2 * blockIdx.x] = c1 - c0;
  out[2 * blockIdx.x + 1] = static_cast<long long>(t1 - t0);
}
}  // namespace

int main(int argc, char** argv) {
  const std::int64_t n = 262144;
  const double seconds = argc > 1 ? std::atof(argv[1]) : 10.0;
  using Shape = std::tuple_element_t<0, Fp32Shapes>;
  const auto kernel = gpu::forces_kernel<float, Shape::threads, Shape::bodies, Shape::unroll, Shape::min_blocks>;
  int sms = 0, resident = 0;
  CHECK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0));
  CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&resident, kernel, Shape::threads, 0));
  const Schedule s = plan_schedule(n, sms, std::array<ShapeOption, 1>{ShapeOption{Shape::threads, Shape::bodies, resident}});

  std::vector<Vec4<float>> bodies(n);
  std::mt19937 rng(1);
  std::uniform_real_distribution<float> unit(-1.0f, 1.0f);
  for (auto& b : bodies) b = Vec4<float>{unit(rng), unit(rng), unit(rng), 0.5f + 0.5f * unit(rng)};
  Vec4<float>*pos = nullptr, *partial = nullptr;
  long long* probe = nullptr;
  CHECK(cudaMalloc(&pos, n * sizeof(Vec4<float>)));
  CHECK(cudaMalloc(&partial, static_cast<size_t>(n * s.slots) * sizeof(Vec4<float>)));
  CHECK(cudaMalloc(&probe, 2 * sms * sizeof(long long)));
  CHECK(cudaMemcpy(pos, bodies.data(), n * sizeof(Vec4<float>), cudaMemcpyHostToDevice));
  cudaEvent_t begin, end;
  CHECK(cudaEventCreate(&begin));
  CHECK(cudaEventCreate(&end));
  std::printf("shape %d threads x %d bodies, %lld blocks on %d SMs\n", Shape::threads, Shape::bodies,
              static_cast<long long>(s.chunks), sms);
  std::printf("%8s %6s %10s %10s %10s %10s\n", "t_s", "launch", "GFLOP/s", "min_GFLOP", "clock_MHz", "min_MHz");

  std::vector<long long> stamps(2 * sms);
  const auto start = std::chrono::steady_clock::now();
  double elapsed = 0, window_start = 0, sum_gflops = 0, min_gflops = 1e30, sum_mhz = 0, min_mhz = 1e30;
  int in_window = 0;
  for (int launch = 0; elapsed < seconds; ++launch) {
    CHECK(cudaEventRecord(begin));
    kernel<<<static_cast<unsigned>(s.chunks), Shape::threads>>>(pos, s, partial);
    CHECK(cudaGetLastError());
    CHECK(cudaEventRecord(end));
    clock_probe<<<sms, 32>>>(probe, 2000000ull);
    CHECK(cudaGetLastError());
    CHECK(cudaDeviceSynchronize());
    float ms = 0;
    CHECK(cudaEventElapsedTime(&ms, begin, end));
    CHECK(cudaMemcpy(stamps.data(), probe, stamps.size() * sizeof(long long), cudaMemcpyDeviceToHost));
    double mhz = 0;
    for (int i = 0; i < sms; ++i) mhz += 1e3 * static_cast<double>(stamps[2 * i]) / static_cast<double>(stamps[2 * i + 1]);
    mhz /= sms;
    const double gflops = 20.0 * static_cast<double>(n) * static_cast<double>(n) / (ms * 1e-3) / 1e9;
    sum_gflops += gflops, sum_mhz += mhz, ++in_window;
    min_gflops = gflops < min_gflops ? gflops : min_gflops;
    min_mhz = mhz < min_mhz ? mhz : min_mhz;
    elapsed = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    if (elapsed - window_start >= 0.5) {
      std::printf("%8.2f %6d %10.0f %10.0f %10.1f %10.1f\n", elapsed, launch, sum_gflops / in_window, min_gflops,
                  sum_mhz / in_window, min_mhz);
      sum_gflops = sum_mhz = 0, min_gflops = min_mhz = 1e30, in_window = 0, window_start = elapsed;
    }
  }
  return 0;
}
