// Host arrays whose start addresses sit at fixed, distinct offsets modulo the
// 4 KiB page, the same in every process. A loop that streams loads from some
// arrays and stores to others runs at very different speeds depending on
// those offsets alone: a load whose address matches a pending store's in its
// low 12 bits waits for that store (4K aliasing), and streams that share L1
// sets evict each other. On the H200 host (2026-11-28) hybrid's CPU sweep took
// 0.3-0.5 ns per cell with some offsets and 1.4-2.2 ns with others, and the
// offsets followed each process's heap history, so one job ran 2-6x faster
// than the next. Every array here starts at a page boundary of its own region
// plus its slot's stagger, whatever the allocator returned (the block is
// aligned up to a page by hand), so the layout is a constant of the code.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>

namespace mpsb {

// Slot j starts kStaggerBytes * j bytes past a page boundary. With at most
// four slots 1 KiB apart, every two arrays are at least 1 KiB apart modulo
// 4 KiB in both directions: no load stream comes within 1 KiB (a few hundred
// pending 16-byte stores, more than an out-of-order core holds in a streaming
// loop) of a store stream's low address bits, and no two streams share an L1
// set at the same position. Multiples of 64: every array starts on a cache line.
inline constexpr std::size_t kPageBytes = 4096;
inline constexpr int kMaxStaggeredArrays = 4;
inline constexpr std::size_t kStaggerBytes = kPageBytes / kMaxStaggeredArrays;
inline constexpr std::size_t kArrayAlignment = 64;

// Where slot `slot` of `arrays` arrays of `floats_each` floats starts, in bytes from the page-aligned
// start of the block; and the block's size. Pure, for the tests.
std::size_t staggered_offset(int slot, std::int64_t floats_each);
std::size_t staggered_block_bytes(int arrays, std::int64_t floats_each);

// pageable: ordinary memory (the CPU device); pinned: cudaMallocHost, for asynchronous copies.
enum class HostMemory { pageable, pinned };

// Frees a block the way it was allocated.
struct HostBlockRelease {
  HostMemory memory = HostMemory::pageable;
  void operator()(void* p) const;
};

// One allocation holding `arrays` float arrays of `floats_each` each, slot j
// at staggered_offset(j). The contents start undefined. Out of memory:
// std::bad_alloc (pageable) or OutOfMemoryError (pinned).
class StaggeredHostArrays {
 public:
  StaggeredHostArrays() = default;
  StaggeredHostArrays(int arrays, std::int64_t floats_each, HostMemory memory);

  float* array(int slot) const;  // nullptr for a slot beyond `arrays`
  int arrays() const { return arrays_; }

 private:
  std::unique_ptr<void, HostBlockRelease> block_;
  char* base_ = nullptr;  // block_ aligned up to a page
  int arrays_ = 0;
  std::int64_t floats_each_ = 0;
};

}  // namespace mpsb
