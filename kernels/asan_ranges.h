// Operand-range checks for kernels built without AddressSanitizer instrumentation inside an ASan
// program (the `asan_models` config of .bazelrc compiles kernels/matmul.cc so, because its
// instrumented F16/F32 tiles made the model tests 5x slower under ASan).
//
// An entry point that calls AsanCheckRows on every row it will read or write keeps ASan's
// guarantee at its boundary: a row that reaches into a redzone or freed memory is reported, with
// ASan's description of the address and a stack trace, and the program aborts as an instrumented
// access would. The checks use the ASan runtime's public interface
// (compiler-rt/include/sanitizer/asan_interface.h: __asan_region_is_poisoned,
// __asan_describe_address; sanitizer/common_interface_defs.h: __sanitizer_print_stack_trace),
// declared weak here, so the file needs no ASan flags: without the runtime (every other build)
// the symbols are null and the checks cost one branch per call.
//
// The kernels' own tests (//kernels:matmul_test and the rest) run fully instrumented under
// `--config=asan`; this only covers the model tests' calls.
#ifndef GGML_WHISPER_KERNELS_ASAN_RANGES_H_
#define GGML_WHISPER_KERNELS_ASAN_RANGES_H_

#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>

extern "C" {
void* __asan_region_is_poisoned(void* beg, size_t size) __attribute__((weak));
void __asan_describe_address(void* addr) __attribute__((weak));
void __sanitizer_print_stack_trace() __attribute__((weak));
}

namespace ggml_cpu {

// True when the ASan runtime is linked into this program.
inline bool AsanRuntimePresent() { return &__asan_region_is_poisoned != nullptr; }

// Checks that `rows` rows of `row_bytes` bytes, the first at `base` and each `stride_bytes` after
// the previous, are all addressable. `fn` and `what` name the entry point and the operand in the
// report. No-op without the ASan runtime or for an empty range.
inline void AsanCheckRows(const char* fn, const char* what, const void* base, size_t rows,
                          size_t row_bytes, size_t stride_bytes) {
  if (!AsanRuntimePresent() || rows == 0 || row_bytes == 0) return;
  const char* p = static_cast<const char*>(base);
  for (size_t r = 0; r < rows; ++r, p += stride_bytes) {
    void* bad = __asan_region_is_poisoned(const_cast<char*>(p), row_bytes);
    if (bad == nullptr) continue;
    fprintf(stderr,
            "==ERROR: AddressSanitizer (kernel operand check): %s: %s row %zu of %zu "
            "[%p, +%zu bytes) is not addressable at %p\n",
            fn, what, r, rows, static_cast<const void*>(p), row_bytes, bad);
    if (&__asan_describe_address != nullptr) __asan_describe_address(bad);
    if (&__sanitizer_print_stack_trace != nullptr) __sanitizer_print_stack_trace();
    abort();
  }
}

}  // namespace ggml_cpu

#endif  // GGML_WHISPER_KERNELS_ASAN_RANGES_H_
