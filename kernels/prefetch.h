// How far ahead the decoder-step products (matmul-inl.h's MulMatDots, quant_ops-inl.h's
// VecDotRows) prefetch the weight rows they will read next. A decoder step streams every weight
// once (tiny.en: 56 MB of F16, 30 MB of Q8_0), so it runs at the rate misses are kept in flight.
//
// Measured on a 2-vCPU AMD Zen 5 VM with //kernels:gemv_benchmark (a tiny.en decoder step's
// products, two runs each): prefetching one 4-row tile ahead (3 KB of F16 vocabulary rows),
// the F16 step took 2.41 ms on 1 thread and 1.29 ms on 2; 16 rows (12 KB) ahead 1.55-1.56 and
// 0.83-1.14 ms (8 rows: 1.86, 32: 1.61, 64: 1.70, 128: 1.75-1.79 ms on 1 thread). Q8_0 rows
// (408 bytes): 4 rows ahead 1.83-1.98 ms, 32 rows (13 KB) 1.04-1.06 ms on 1 thread and
// 0.57-0.59 ms on 2 (64 rows: 1.19-1.25 ms).
#ifndef GGML_WHISPER_KERNELS_PREFETCH_H_
#define GGML_WHISPER_KERNELS_PREFETCH_H_

#include <stddef.h>

namespace ggml_cpu {

// Bytes of weight rows between the rows being read and the rows being prefetched.
inline constexpr size_t kPrefetchBytesAhead = size_t{12} << 10;

// kPrefetchBytesAhead in rows of row_bytes, rounded up to whole 4-row tiles (at least one):
// tiny.en F16 (768-byte rows) 16 rows, Q8_0 (408 bytes) 32 rows, a [1536, 384] F16 fc2 4 rows.
inline constexpr size_t PrefetchRowsAhead(size_t row_bytes) {
  const size_t rows = row_bytes == 0 ? 4 : (kPrefetchBytesAhead + row_bytes - 1) / row_bytes;
  return rows < 4 ? 4 : (rows + 3) / 4 * 4;
}

static_assert(PrefetchRowsAhead(768) == 16 && PrefetchRowsAhead(408) == 32 && PrefetchRowsAhead(3072) == 4,
              "the distances measured above");

}  // namespace ggml_cpu

#endif  // GGML_WHISPER_KERNELS_PREFETCH_H_
