// SIMD kernels for ggml's legacy quantized types, dispatched once per call to the best Highway
// target of the CPU (SSSE3, SSE4, AVX2, AVX3, and AVX3_DL using AVX512-VNNI on x86; NEON, and
// SVE/SVE2/SVE_256/SVE2_128 using sdot on Arm; scalar fallback): Q8 quantization of activation rows, and dot products of quantized weight rows with
// quantized activations.
// Block layouts: quant_types.h. Scalar oracles: quant_ref.h. Type-erased table: quant_traits.h.
//
// Pairs follow ggml-cpu (weights . activations): Q4_0.Q8_0, Q4_1.Q8_1, Q5_0.Q8_0, Q5_1.Q8_1,
// Q8_0.Q8_0.
//
// Preconditions (not checked in release builds; callers validate tensor shapes, e.g. with
// ggml_row_size_ok): n and k are >= 0 multiples of kQK = 32, nrows >= 0, and pointers cover the
// whole rows. Blocks need no alignment beyond their natural 2 bytes.
#ifndef GGML_WHISPER_KERNELS_QUANT_OPS_H_
#define GGML_WHISPER_KERNELS_QUANT_OPS_H_

#include <stddef.h>
#include <stdint.h>

#include "kernels/quant_types.h"

namespace ggml_cpu {

// Quantizes one activation row of k floats (ggml ne0) into k / 32 blocks. Bit-identical to
// quantize_row_q8_0_ref / quantize_row_q8_1_ref on every target, including non-finite input.
void quantize_row_q8_0(const float* x, block_q8_0* y, int64_t k);
void quantize_row_q8_1(const float* x, block_q8_1* y, int64_t k);

// Dot products of `nrows` weight rows with one activation row:
//   s[r] = sum_{i < n} x_r[i] * y[i],  r in [0, nrows),
// where x_r is the row starting at byte offset r * x_nb1 from x (ggml's nb1 of the weight
// tensor) and holds n / 32 blocks, y holds n / 32 blocks, and s has nrows floats.
// Accuracy: bit-identical to the *_ref functions (ggml's vec_dot_*_ref) on every target: each
// block's code products are summed exactly as integers, and the block's float term is formed
// and added to the row's sum in block order exactly as the reference does. So results do not
// depend on the CPU (x86 or Arm, any vector length). NaN or inf scales give NaN or inf.
// Typical use (mul_mat, one activation row against many weight rows):
//   quantize_row_q8_0(b_row, y, ne00);                     // once per activation row
//   vec_dot_q4_0_q8_0(ne00, ne01, a, a->nb[1], y, dst_row); // all weight rows
void vec_dot_q4_0_q8_0(int64_t n, int64_t nrows, const block_q4_0* x, size_t x_nb1,
                       const block_q8_0* y, float* s);
void vec_dot_q4_1_q8_1(int64_t n, int64_t nrows, const block_q4_1* x, size_t x_nb1,
                       const block_q8_1* y, float* s);
void vec_dot_q5_0_q8_0(int64_t n, int64_t nrows, const block_q5_0* x, size_t x_nb1,
                       const block_q8_0* y, float* s);
void vec_dot_q5_1_q8_1(int64_t n, int64_t nrows, const block_q5_1* x, size_t x_nb1,
                       const block_q8_1* y, float* s);
void vec_dot_q8_0_q8_0(int64_t n, int64_t nrows, const block_q8_0* x, size_t x_nb1,
                       const block_q8_0* y, float* s);

// The same for ncols activation rows at once (a batched decoder step: one row per beam):
//   s[c * lds + r] = sum_{i < n} x_r[i] * y_c[i],  r in [0, nrows), c in [0, ncols),
// where y_c starts at byte offset c * y_stride from y and s has lds >= nrows floats per column.
// Each weight block is read once per group of up to 4 columns instead of once per column.
// Bit-identical to calling the single-row function above once per column, on every target.
void vec_dot_cols_q4_0_q8_0(int64_t n, int64_t nrows, const block_q4_0* x, size_t x_nb1,
                            const block_q8_0* y, size_t y_stride, int64_t ncols, float* s, size_t lds);
void vec_dot_cols_q4_1_q8_1(int64_t n, int64_t nrows, const block_q4_1* x, size_t x_nb1,
                            const block_q8_1* y, size_t y_stride, int64_t ncols, float* s, size_t lds);
void vec_dot_cols_q5_0_q8_0(int64_t n, int64_t nrows, const block_q5_0* x, size_t x_nb1,
                            const block_q8_0* y, size_t y_stride, int64_t ncols, float* s, size_t lds);
void vec_dot_cols_q5_1_q8_1(int64_t n, int64_t nrows, const block_q5_1* x, size_t x_nb1,
                            const block_q8_1* y, size_t y_stride, int64_t ncols, float* s, size_t lds);
void vec_dot_cols_q8_0_q8_0(int64_t n, int64_t nrows, const block_q8_0* x, size_t x_nb1,
                            const block_q8_0* y, size_t y_stride, int64_t ncols, float* s, size_t lds);

}  // namespace ggml_cpu

#endif  // GGML_WHISPER_KERNELS_QUANT_OPS_H_
