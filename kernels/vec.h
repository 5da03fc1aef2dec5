// Row kernels on contiguous f32/f16 vectors: elementwise add/mul/scale (with row broadcast), dot
// products, reductions and f32<->f16 conversion. The analogue of ggml's vec.h (ggml_vec_*_f32),
// written once with Highway and dispatched at run time (see kernels/dispatch.h).
//
// Conventions for every function here:
//   - `n` is the number of elements of a row (ggml ne[0]); n == 0 is allowed and does nothing.
//   - Pointers need no particular alignment. Strides are in elements (not bytes) and may be odd.
//   - Outputs may alias an input exactly (in-place), but must not partially overlap it.
//   - Each call dispatches once; no heap allocation, no locks (safe from many threads on
//     disjoint outputs).
//   - f16 is ggml_fp16_t (IEEE binary16 bits, ggml/fp16.h); widening is exact, narrowing rounds to
//     nearest even exactly like ggml_fp32_to_fp16 on every target.
#ifndef GGML_WHISPER_KERNELS_VEC_H_
#define GGML_WHISPER_KERNELS_VEC_H_

#include <stddef.h>

#include "ggml/fp16.h"

namespace ggml_cpu {

// y[i] = a[i] + b[i]. Bit-identical to the scalar sum (ggml_vec_add_f32).
void AddF32(size_t n, const float* a, const float* b, float* y);
// y[i] = a[i] * b[i] (ggml_vec_mul_f32).
void MulF32(size_t n, const float* a, const float* b, float* y);
// y[i] = s * x[i] (ggml_vec_scale_f32, out of place).
void ScaleF32(size_t n, float s, const float* x, float* y);

// Row broadcast, as ggml_add / ggml_mul with src1 of ne = [n, 1]: for r < nrows, i < n:
//   y[r * y_stride + i] = x[r * x_stride + i] + b[i]   (AddRowsBroadcastF32)
//   y[r * y_stride + i] = x[r * x_stride + i] * b[i]   (MulRowsBroadcastF32)
// x, y: nrows rows of n floats at the given strides (>= n); b: one row of n floats.
void AddRowsBroadcastF32(size_t n, size_t nrows, const float* x, size_t x_stride, const float* b,
                         float* y, size_t y_stride);
void MulRowsBroadcastF32(size_t n, size_t nrows, const float* x, size_t x_stride, const float* b,
                         float* y, size_t y_stride);

// Returns the lowest i with x[i] == max (ties go to the lowest index, as whisper's greedy
// sampler expects); 0 for n == 0, or if no element equals the max (NaN input).
size_t ArgmaxF32(size_t n, const float* x);

// Returns max_i x[i]: -inf for n == 0 (and for a row of -inf), the same value as a scalar
// std::max loop when x has no NaN (with NaN the result is unspecified: NaN or another element).
// The max is exact, so the order of the comparisons does not matter.
float MaxF32(size_t n, const float* x);

// Returns the lowest i with x[i] > t, or n if there is none (NaN compares false, so it is never
// found; t = -inf finds the first element that is not -inf). A top-k scan's skip-ahead: with the
// k-th best so far as t, most of a logits row is skipped 8 or 16 floats at a time.
size_t FindGreaterF32(size_t n, const float* x, float t);

// y[i] = ggml_fp32_to_fp16(x[i]) (bit-exact) and y[i] = ggml_fp16_to_fp32(x[i]) (exact).
void ConvertF32ToF16(size_t n, const float* x, ggml_fp16_t* y);
void ConvertF16ToF32(size_t n, const ggml_fp16_t* x, float* y);

}  // namespace ggml_cpu

#endif  // GGML_WHISPER_KERNELS_VEC_H_
