// Not part of mpsbench: the experiment behind docs/findings.md, "Taking turns". Would a paired design remove
// the spread at one rank per GPU? Two processes on one GPU and one pinned CPU take turns in short blocks of
// bf16 GEMMs (a token through pipes), so a host slowdown of 0.1-1 s hits both; each prints its median rate.
// usage: pair CPU BLOCKS BLOCK_MS N ALTERNATE(0|1) PIPE_A PIPE_B   (PIPE_x: CUDA_MPS_PIPE_DIRECTORY of x;
// "none" = a directory with no daemon: a plain, time-sliced context). ALTERNATE 0: A does all its blocks,
// then B all of its (two processes measured one after the other, as separate jobs are).
#include <cublas_v2.h>
#include <cuda_bf16.h>
#include <cuda_runtime.h>
#include <sched.h>
#include <sys/wait.h>
#include <unistd.h>
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>
static double now() { return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count(); }
static float P[3][2048];
__attribute__((noinline)) static void sweep(const float* __restrict in, const float* __restrict f, float* __restrict out) {
  for (int i = 1; i < 2047; ++i) out[i] = in[i] + 0.25f * (in[i - 1] + in[i + 1] - 2 * in[i]) + 0.1f * (f[i] - in[i]);
}
static double probe_us() { double best = 1e9; int cur = 0;
  for (int r = 0; r < 3; ++r) { double t = now(); for (int s = 0; s < 8; ++s) { sweep(P[cur], P[1], P[2 - cur]); cur = 2 - cur; } best = std::min(best, now() - t); }
  return best * 1e6; }
#define CK(x) do { auto e = (x); if (e != 0) { fprintf(stderr, "error %d at %s:%d\n", (int)e, __FILE__, __LINE__); exit(1); } } while (0)

static void child(int id, int cpu, int blocks, double block_s, int n, bool alternate, const char* pipe_dir, int rd, int wr) {
  if (std::string(pipe_dir) != "none") setenv("CUDA_MPS_PIPE_DIRECTORY", pipe_dir, 1);
  else setenv("CUDA_MPS_PIPE_DIRECTORY", "/tmp/pair-no-daemon", 1);
  cpu_set_t s; CPU_ZERO(&s); CPU_SET(cpu, &s); sched_setaffinity(0, sizeof s, &s);
  for (int i = 0; i < 2048; ++i) P[0][i] = P[2][i] = (i * 37 % 2048) / 2048.f, P[1][i] = 1 - P[0][i];
  char tok;
  if (id == 1 && read(rd, &tok, 1) != 1) exit(2);  // B sets up after A: contexts one at a time
  CK(cudaSetDevice(0)); CK(cudaFree(0));
  int mps = 0; CK(cudaDeviceGetAttribute(&mps, (cudaDeviceAttr)cudaDevAttrMpsEnabled, 0));
  cublasHandle_t h; CK(cublasCreate(&h));
  __nv_bfloat16 *a, *b, *c; size_t bytes = sizeof(__nv_bfloat16) * n * n;
  CK(cudaMalloc(&a, bytes)); CK(cudaMalloc(&b, bytes)); CK(cudaMalloc(&c, bytes));
  CK(cudaMemset(a, 0, bytes)); CK(cudaMemset(b, 0, bytes));
  float one = 1, zero = 0;
  auto gemm = [&] { return cublasGemmEx(h, CUBLAS_OP_N, CUBLAS_OP_N, n, n, n, &one, a, CUDA_R_16BF, n, b, CUDA_R_16BF, n, &zero, c, CUDA_R_16BF, n, CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT); };
  for (int i = 0; i < 300; ++i) CK(gemm());
  CK(cudaDeviceSynchronize());
  if (id == 0) { if (write(wr, "t", 1) != 1) exit(2); if (read(rd, &tok, 1) != 1) exit(2); }  // B ready
  else if (write(wr, "t", 1) != 1) exit(2);
  std::vector<double> rate(blocks), probe(blocks);
  // alternate: A, B, A, B, ... one block per turn. Otherwise A does all its blocks, then B does all of its.
  for (int k = 0; k < blocks; ++k) {
    bool my_turn_first = (id == 0);
    if (alternate || k == 0) {
      if (!(my_turn_first && k == 0) && read(rd, &tok, 1) != 1) exit(2);
    }
    probe[k] = probe_us();
    double t0 = now(); long cnt = 0;
    while (now() - t0 < block_s) { for (int i = 0; i < 64; ++i) CK(gemm()); cnt += 64; }
    CK(cudaDeviceSynchronize());
    rate[k] = cnt / (now() - t0);
    if (alternate || k == blocks - 1) { if (write(wr, "t", 1) != 1) exit(2); }
  }
  std::sort(rate.begin(), rate.end()); std::sort(probe.begin(), probe.end());
  printf("proc %d mps %d cpu %d: median %.0f gemm/s (p10 %.0f p90 %.0f) probe median %.2f us\n", id, mps, sched_getcpu(),
         rate[blocks / 2], rate[blocks / 10], rate[blocks * 9 / 10], probe[blocks / 2]);
  fflush(stdout);
  cublasDestroy(h);
  exit(0);
}

int main(int argc, char** argv) {
  if (argc < 8) { fprintf(stderr, "usage\n"); return 2; }
  int cpu = atoi(argv[1]), blocks = atoi(argv[2]); double block_s = atof(argv[3]) / 1000; int n = atoi(argv[4]);
  bool alternate = atoi(argv[5]) != 0;
  int ab[2], ba[2]; if (pipe(ab) || pipe(ba)) return 2;
  pid_t pa = fork();
  if (pa == 0) child(0, cpu, blocks, block_s, n, alternate, argv[6], ba[0], ab[1]);
  pid_t pb = fork();
  if (pb == 0) child(1, cpu, blocks, block_s, n, alternate, argv[7], ab[0], ba[1]);
  int st, bad = 0;
  waitpid(pa, &st, 0); bad |= !(WIFEXITED(st) && WEXITSTATUS(st) == 0);
  waitpid(pb, &st, 0); bad |= !(WIFEXITED(st) && WEXITSTATUS(st) == 0);
  return bad;
}
