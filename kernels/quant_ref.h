// Scalar reference quantization for ggml's legacy block types (see quant_types.h): the oracle
// that the SIMD kernels in quant_ops.h are tested against, and the weight quantizers used
// offline. Follows ggml/src/ggml-quants.c (quantize_row_*_ref, dequantize_row_*) and the generic
// vec_dot kernels of ggml-cpu/quants.c rule for rule:
//
//   Q4_0: d = x_amax / -8 (x_amax: the first element of largest |x|, signed),
//         q = min(15, trunc(x / d + 8.5))
//   Q4_1: d = (max - min) / 15, m = min,            q = min(15, trunc((x - m) / d + 0.5))
//   Q5_0: d = x_amax / -16,                          q = min(31, trunc(x / d + 16.5))
//   Q5_1: d = (max - min) / 31, m = min,            q = trunc((x - m) / d + 0.5)
//   Q8_0: d = max|x| / 127,                          q = roundf(x / d) (ties away from zero)
//   Q8_1: as Q8_0, plus s = d * sum(q)
//
// where "x / d" is computed as x * id with id = 1 / d, and id = 0 when d = 0 (an all-zero or
// constant block). Scales are computed in float and stored rounded to fp16 (nearest even);
// codes use the unrounded float scale, exactly as ggml does.
//
// Non-finite input: ggml's float -> int8 conversions are undefined for NaN or out-of-range
// values (which also arise when a block's scale is subnormal and 1/d overflows). Here every
// code is clamped to its valid range and a NaN product maps to code 0 (the lowest level of the
// 4- and 5-bit types, zero for Q8), so the output is defined; NaN elements are ignored when
// choosing a block's scale (ggml lets a NaN reset its running Q8 maximum). For finite inputs
// with a normal scale the result is ggml's bit for bit.
//
// Shapes: a row is `k` consecutive floats (ggml ne0) and k / 32 blocks. Precondition for every
// function: k >= 0 and k % 32 == 0 (callers check tensors with ggml_row_size_ok); pointers are
// valid for the whole row; input and output do not overlap.
#ifndef GGML_WHISPER_KERNELS_QUANT_REF_H_
#define GGML_WHISPER_KERNELS_QUANT_REF_H_

#include <stdint.h>

#include "kernels/quant_types.h"

namespace ggml_cpu {

// x: k floats -> y: k / 32 blocks.
void quantize_row_q4_0_ref(const float* x, block_q4_0* y, int64_t k);
void quantize_row_q4_1_ref(const float* x, block_q4_1* y, int64_t k);
void quantize_row_q5_0_ref(const float* x, block_q5_0* y, int64_t k);
void quantize_row_q5_1_ref(const float* x, block_q5_1* y, int64_t k);
void quantize_row_q8_0_ref(const float* x, block_q8_0* y, int64_t k);
void quantize_row_q8_1_ref(const float* x, block_q8_1* y, int64_t k);

// x: k / 32 blocks -> y: k floats. Q4_0: (q - 8) * d; Q4_1: q * d + m; Q5_0: (q - 16) * d;
// Q5_1: q * d + m; Q8_0, Q8_1: q * d (s is ignored). Exact up to the one float rounding of the
// product (and of the sum for the _1 types), as in ggml.
void dequantize_row_q4_0(const block_q4_0* x, float* y, int64_t k);
void dequantize_row_q4_1(const block_q4_1* x, float* y, int64_t k);
void dequantize_row_q5_0(const block_q5_0* x, float* y, int64_t k);
void dequantize_row_q5_1(const block_q5_1* x, float* y, int64_t k);
void dequantize_row_q8_0(const block_q8_0* x, float* y, int64_t k);
void dequantize_row_q8_1(const block_q8_1* x, float* y, int64_t k);

// Dot product of two quantized rows of n elements (n / 32 blocks each), ggml's generic kernel:
// per block an exact integer sum of code products, times d_x * d_y in float, summed over blocks
// in order; the _1 types add m_x * s_y per block.
float vec_dot_q4_0_q8_0_ref(int64_t n, const block_q4_0* x, const block_q8_0* y);
float vec_dot_q4_1_q8_1_ref(int64_t n, const block_q4_1* x, const block_q8_1* y);
float vec_dot_q5_0_q8_0_ref(int64_t n, const block_q5_0* x, const block_q8_0* y);
float vec_dot_q5_1_q8_1_ref(int64_t n, const block_q5_1* x, const block_q8_1* y);
float vec_dot_q8_0_q8_0_ref(int64_t n, const block_q8_0* x, const block_q8_0* y);

}  // namespace ggml_cpu

#endif  // GGML_WHISPER_KERNELS_QUANT_REF_H_
