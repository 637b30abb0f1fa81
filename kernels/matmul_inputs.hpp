// A and B of one rank, element by element: the one definition that make_inputs (the host product and
// the tests), the GPU workload's fill on the device (matmul.cu) and the float64 reference, which makes
// only the rows of A and the columns of B its entries need (matmul_cpu.cpp), all call. Issue 28: making
// two 8192 x 8192 matrices on one host core took most of a configuration's set-up.
#pragma once

#include <cstddef>
#include <cstdint>

#include <cuda_runtime_api.h>

#include "host_device.hpp"
#include "random_inputs.hpp"

namespace mpsb::matmul {

enum class Operand { a, b };

// The seed of A's or B's stream, from the workload's seed.
MPSB_HOST_DEVICE inline std::uint64_t operand_seed(std::uint64_t seed, Operand operand) {
  return operand == Operand::a ? seed : seed ^ 0x5DEECE66Dull;
}

// Element `index` (row-major, i * N + j) of A or B, uniform in [-1, 1), before any rounding to the
// stored precision (bf16 rounds it to nearest even; fp32 and tf32 store it as it is).
MPSB_HOST_DEVICE inline float operand_value(std::uint64_t operand_seed, std::uint64_t index) {
  return uniform_at(operand_seed, index, -1.0f, 1.0f);
}

// Fills `count` elements of `out` on the device, on `stream` (not waited for): operand_value(operand_seed, i)
// as float, or rounded to nearest even as __nv_bfloat16 (bf16 true), as make_inputs stores them.
void fill_on_device(void* out, bool bf16, std::size_t count, std::uint64_t operand_seed, cudaStream_t stream);

}  // namespace mpsb::matmul
