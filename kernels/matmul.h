// mul_mat with ggml's semantics, for one thread's share of the output:
//
//   a: ne = [K, M]  (M rows of K elements, row stride lda),  F32, F16 or a plugged-in type
//   b: ne = [K, N]  (N rows of K floats,   row stride ldb),  F32
//   c: ne = [M, N]  (N rows of M floats,   row stride ldc),  c[n][m] = sum_k a[m][k] * b[n][k]
//
// (ggml_mul_mat(ctx, a, b); in BLAS terms C^T = A * B^T with every matrix row-major.)
// Strides are in elements of the pointed-to type, except a_nb1 of the plugged-in path (bytes).
//
// Work splitting: each call computes the block m in [m_begin, m_end) x n in [n_begin, n_end) of
// c, so `nth` threads call it with disjoint blocks (ggml's ith/nth; split M for matrix-vector
// products, either for matrix-matrix). Calls allocate nothing: F32/F16 take a per-thread scratch
// buffer of MulMatWorkSize() bytes; the plugged-in path takes the converted b rows.
//
// Algorithm (F32/F16, N block >= kMulMatPackedMinN): BLIS-style cache blocking. K is cut in
// blocks of <= 512; for each block of 128 rows of a, the a block is packed (and F16 widened to
// F32, exactly) into column panels of 2 vectors of M (32 rows with AVX-512), which stay in L2;
// then for each group of 12 (AVX-512) or 6 (AVX2 and below) rows of b, packed once into L1, a
// register micro-kernel accumulates a 2-vector x 12 tile of c with FMAs (no horizontal sums).
// Smaller N (decoder steps, the vocabulary projection) uses dot products of 4 a rows x <= 4 b
// rows, streaming a once, with the next 4 rows prefetched while the current ones are read
// (//kernels:gemv_benchmark compares a decoder step's products with a bare read of its bytes). F16 is widened rather than b narrowed to f16 (ggml's choice): the
// packing cost is amortized over all N columns, the FMAs run at f32 rate either way, and b keeps
// full precision.
//
// Errors (absl::InvalidArgumentError, naming the argument): null pointers for a non-empty block,
// ranges with begin > end, lda/ldb < K, ldc < m_end, scratch smaller than required, K not a
// multiple of the plugged-in type's block size. c must not overlap a or b (not checked).
#ifndef GGML_WHISPER_KERNELS_MATMUL_H_
#define GGML_WHISPER_KERNELS_MATMUL_H_

#include <stddef.h>
#include <stdint.h>

#include "absl/status/status.h"
#include "ggml/fp16.h"

namespace ggml_cpu {

// Below this many columns (b rows) in the block, F32/F16 use the dot-product path.
inline constexpr size_t kMulMatPackedMinN = 16;

// Scratch bytes one concurrent MulMatF32/MulMatF16 call needs (independent of the shapes:
// about 290 KB). Any alignment; each thread needs its own.
size_t MulMatWorkSize();

// c[n * ldc + m] = dot(a row m, b row n) for m in [m_begin, m_end), n in [n_begin, n_end).
// a has >= m_end rows, b >= n_end rows. K == 0 writes zeros. Accumulation in f32 with FMA
// (where the target has it); each output sums its K products in k order within blocks of 512.
absl::Status MulMatF32(size_t k, const float* a, size_t lda, const float* b, size_t ldb, float* c,
                       size_t ldc, size_t m_begin, size_t m_end, size_t n_begin, size_t n_end,
                       void* work, size_t work_size);
// As MulMatF32 with a in f16 (ggml_fp16_t), widened exactly; b stays f32.
absl::Status MulMatF16(size_t k, const ggml_fp16_t* a, size_t lda, const float* b, size_t ldb,
                       float* c, size_t ldc, size_t m_begin, size_t m_end, size_t n_begin,
                       size_t n_end, void* work, size_t work_size);

// The dot-product path for a block of any number of b rows: c as MulMatF32 / MulMatF16, but
// every output is computed exactly as for a block of fewer than kMulMatPackedMinN b rows, so
// column n's bits depend only on a and b row n, never on n_begin, n_end or the other rows
// (a multi-sequence decoder step keeps each sequence's logits those of the sequence alone,
// ggml/ops.h ggml_mul_mat_set_matvec). a is streamed once per call: each tile of 4 a rows meets
// every b row (in groups of 5 with AVX-512, 3 below) while it is in L1, so for many b rows the
// cost is the FMAs rather than the read of a. No scratch. Errors: those of MulMatF32 except the
// scratch.
absl::Status MulMatF32Dots(size_t k, const float* a, size_t lda, const float* b, size_t ldb,
                           float* c, size_t ldc, size_t m_begin, size_t m_end, size_t n_begin,
                           size_t n_end);
absl::Status MulMatF16Dots(size_t k, const ggml_fp16_t* a, size_t lda, const float* b, size_t ldb,
                           float* c, size_t ldc, size_t m_begin, size_t m_end, size_t n_begin,
                           size_t n_end);

// ---- Quantized a, dequantized into the packed panels (the matrix-matrix path) -----------------
//
// Rows of a in a block format (ggml's Q4_0..Q8_0: blck_size elements in block_bytes bytes) are
// dequantized exactly by to_float (ggml's dequantize_row_*), kc <= 512 elements at a time, into
// the same f32 panels as F16's widening, and the same micro-kernel runs: the dequantization is
// paid once per (block of 128 rows of a, K block) and amortized over every b row of the block,
// so a matrix-matrix product runs at the F32/F16 rate. b stays f32: unlike the MulMatConverted
// path below (and ggml's vec_dot, which quantizes b to Q8_0/Q8_1), the only error is f32
// accumulation, as MulMatF32 on the dequantized a. For few b rows (decoder steps, N <
// kMulMatPackedMinN) MulMatConverted is faster: it reads a once with integer dot products.
struct MulMatDequantOps {
  const char* name;    // for error messages, e.g. "q8_0"
  int64_t blck_size;   // elements per block; must divide 512
  size_t block_bytes;  // bytes per block (ggml_type_size)
  void (*to_float)(const void* x, float* y, int64_t k);  // k a multiple of blck_size
};

// c[n * ldc + m] = dot(to_float(a row m), b row n) over the block; a rows are a_nb1 bytes apart,
// b as in MulMatF32; work as MulMatF32's (MulMatWorkSize() bytes per concurrent call). Errors:
// as MulMatF32, plus incomplete ops, a block size that does not divide 512, k not a multiple of
// it, and a_nb1 shorter than one row.
absl::Status MulMatDequant(const MulMatDequantOps& ops, size_t k, const void* a, size_t a_nb1,
                           const float* b, size_t ldb, float* c, size_t ldc, size_t m_begin,
                           size_t m_end, size_t n_begin, size_t n_end, void* work,
                           size_t work_size);

// ---- The hook for other storage types of a (kernels/quant* fills it for Q4_0..Q8_0) ----------
//
// A type plugs in with two row functions, exactly ggml's from_float/vec_dot pair (and the
// from_vec_dot / vec_dot fields of kernels/quant_traits.h, so QuantTypeTraits maps 1:1):
//   from_float converts one b row of K floats to the type's vec_dot_type (quantize_row_q8_0);
//   vec_dot computes s[r] = dot(a row r, converted b row) for nrows rows of a (a_nb1 bytes apart).
// mul_mat then runs in two phases, so threads can split each (with a barrier in between):
//   1. MulMatConvertB over b rows [n_begin, n_end): each converted row goes to
//      wdata + n * MulMatConvertedRowBytes(ops, K); wdata holds MulMatConvertedWorkSize(ops, K, N).
//   2. MulMatConverted over any block of c: a blocks that fit in L2 are swept against each
//      converted b row, one vec_dot call per (a block, b row), or one vec_dot_cols call per a
//      block when the ops have it and the block has several b rows: dispatch never runs per
//      element.
struct MulMatRowOps {
  const char* name;            // for error messages, e.g. "q4_0"
  int64_t blck_size;           // K must be a multiple of this (32 for the quantized types)
  size_t vec_dot_block_bytes;  // bytes of blck_size converted b elements (34 for Q8_0)
  void (*from_float)(const float* x, void* y, int64_t k);
  void (*vec_dot)(int64_t n, int64_t nrows, const void* a, size_t a_nb1, const void* y, float* s);
  // Optional (NULL: one vec_dot per converted b row): s[c * lds + r] = vec_dot of a row r with
  // converted b row c, for ncols rows y_stride bytes apart, bit-identical to vec_dot; reads each
  // block of a once per few b rows (quant_ops.h's vec_dot_cols_*).
  void (*vec_dot_cols)(int64_t n, int64_t nrows, const void* a, size_t a_nb1, const void* y,
                       size_t y_stride, int64_t ncols, float* s, size_t lds) = nullptr;
};

// Bytes of one converted b row of k elements, and of n of them.
size_t MulMatConvertedRowBytes(const MulMatRowOps& ops, size_t k);
size_t MulMatConvertedWorkSize(const MulMatRowOps& ops, size_t k, size_t n);

// Phase 1: converts b rows [n_begin, n_end) (K floats each, stride ldb) into wdata.
absl::Status MulMatConvertB(const MulMatRowOps& ops, size_t k, const float* b, size_t ldb,
                            size_t n_begin, size_t n_end, void* wdata, size_t wdata_size);
// Phase 2: c[n * ldc + m] = dot(a row m, converted b row n) over the block; a rows are a_nb1
// bytes apart; wdata as written by phase 1 (all rows of the block converted).
absl::Status MulMatConverted(const MulMatRowOps& ops, size_t k, const void* a, size_t a_nb1,
                             const void* wdata, size_t wdata_size, float* c, size_t ldc,
                             size_t m_begin, size_t m_end, size_t n_begin, size_t n_end);

}  // namespace ggml_cpu

#endif  // GGML_WHISPER_KERNELS_MATMUL_H_
