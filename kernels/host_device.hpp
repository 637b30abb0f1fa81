// MPSB_HOST_DEVICE marks a function that both host code and CUDA kernels call: the GPU workloads and
// their CPU references then compute one definition (input generators, per-element formulas).
#pragma once

#if defined(__CUDACC__)
#define MPSB_HOST_DEVICE __host__ __device__
#else
#define MPSB_HOST_DEVICE
#endif
