// Test-only counter of heap allocations, for zero-allocation tests ("after reserve, an
// alloc_graph / compute / transcription step calls malloc and new 0 times").
//
// What is counted: every malloc, calloc, realloc (size > 0), reallocarray, aligned_alloc,
// posix_memalign, memalign, valloc and pvalloc made by ANY thread of the process (a global
// atomic: work done by worker threads is included), between Start() and Stop(). operator new and
// new[] (all variants) are counted through the malloc/aligned_alloc they call. frees are not
// counted.
//
// How: in a normal or UBSan build, the library defines malloc and friends (glibc symbol
// interposition; they forward to glibc's __libc_malloc and friends), so linking it into a binary
// replaces the allocator entry points for the whole process, shared libraries included. Under
// AddressSanitizer, which owns malloc, it registers a hook with
// __sanitizer_install_malloc_and_free_hooks instead. Under ThreadSanitizer or MemorySanitizer
// counting is not supported (Supported() is false): tests should GTEST_SKIP then.
//
// Link it only into test and benchmark binaries (the target is testonly).
//
// Usage:
//   ggml_testing::AllocCounter::Start();
//   RunStep();
//   EXPECT_EQ(ggml_testing::AllocCounter::Stop(), 0);
// or
//   { ggml_testing::ScopedAllocCounter count; RunStep(); EXPECT_EQ(count.allocations(), 0); }
#ifndef GGML_WHISPER_TESTING_ALLOC_COUNTER_H_
#define GGML_WHISPER_TESTING_ALLOC_COUNTER_H_

#include <cstdint>

namespace ggml_testing {

class AllocCounter {
 public:
  // True when this build can count (not under TSan/MSan).
  static bool Supported();
  // Resets the counts to 0 and starts counting. Counting is process-wide; do not nest.
  static void Start();
  // Stops counting; returns the allocations since Start().
  static int64_t Stop();
  // Allocations since Start(), without stopping.
  static int64_t Allocations();
  // Bytes requested by those allocations.
  static int64_t Bytes();
};

// Counts allocations during its lifetime (Start() in the constructor, Stop() in the destructor).
class ScopedAllocCounter {
 public:
  ScopedAllocCounter() { AllocCounter::Start(); }
  ~ScopedAllocCounter() { AllocCounter::Stop(); }
  ScopedAllocCounter(const ScopedAllocCounter&) = delete;
  ScopedAllocCounter& operator=(const ScopedAllocCounter&) = delete;
  int64_t allocations() const { return AllocCounter::Allocations(); }
  int64_t bytes() const { return AllocCounter::Bytes(); }
};

}  // namespace ggml_testing

#endif  // GGML_WHISPER_TESTING_ALLOC_COUNTER_H_
