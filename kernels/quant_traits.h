// Per-type table of the quantized kernels, type-erased so that mul_mat, get_rows and the
// quantize tool can switch on a tensor's ggml_type once (ggml-cpu's type_traits_cpu analogue).
//
// How mul_mat uses it for dst = mul_mat(a, b), a quantized weights [ne00, ne01], b f32 [ne10 =
// ne00, ne11] (ggml ne order; dst[i01, i11] = dot(a row i01, b row i11)):
//
//   const QuantTypeTraits* t = GetQuantTypeTraits(a->type);      // NULL: not a quantized type
//   // One activation row in t->vec_dot_type: ggml_row_size(t->vec_dot_type, ne00) bytes of
//   // caller-provided scratch per thread (no allocation here).
//   for each b row i11:
//     t->from_vec_dot(b_row(i11), scratch, ne00);               // quantize the activations once
//     t->vec_dot(ne00, ne01, a->data, a->nb[1], scratch, dst_row(i11));  // all weight rows
//
// quant_matmul.h wraps these fields as kernels/matmul.h MulMatRowOps (QuantMulMatRowOps), which
// MulMatConvertB / MulMatConverted run in exactly this pattern.
//
// vec_dot takes several weight rows per call (a thread's share of ne01 is one call) so that the
// activation block is decoded once for 4 weight rows and dispatch costs nothing per row.
#ifndef GGML_WHISPER_KERNELS_QUANT_TRAITS_H_
#define GGML_WHISPER_KERNELS_QUANT_TRAITS_H_

#include <stddef.h>
#include <stdint.h>

#include "ggml/types.h"

namespace ggml_cpu {

// Dequantizes k elements (k / blck_size blocks at x) into k floats at y.
using QuantToFloatFn = void (*)(const void* x, float* y, int64_t k);
// Quantizes k floats at x into k / blck_size blocks at y.
using QuantFromFloatFn = void (*)(const float* x, void* y, int64_t k);
// s[r] = dot(x row r, y) for r < nrows: x rows of this type, x_nb1 bytes apart, n elements
// each; y one row of n elements in vec_dot_type.
using QuantVecDotFn = void (*)(int64_t n, int64_t nrows, const void* x, size_t x_nb1, const void* y,
                               float* s);
// s[c * lds + r] = dot(x row r, y row c) for r < nrows, c < ncols: the same against ncols
// activation rows y_stride bytes apart, bit-identical to one QuantVecDotFn call per column.
using QuantVecDotColsFn = void (*)(int64_t n, int64_t nrows, const void* x, size_t x_nb1, const void* y,
                                   size_t y_stride, int64_t ncols, float* s, size_t lds);

// For every function: k and n are multiples of blck_size (check with ggml_row_size_ok).
struct QuantTypeTraits {
  ggml_type type;
  int64_t blck_size;              // elements per block: 32
  size_t type_size;               // bytes per block: 18, 20, 22, 24, 34, 36 (= ggml_type_size)
  ggml_type vec_dot_type;         // type of the activation row that vec_dot takes as y
  QuantToFloatFn to_float;        // dequantize_row_* (scalar, exact)
  QuantFromFloatFn from_float;    // quantize a row of this type: the *_ref quantizer for
                                  // weights, the SIMD one (bit-identical) for Q8_0 / Q8_1
  QuantFromFloatFn from_vec_dot;  // quantize a row of vec_dot_type (SIMD): the activations
  QuantVecDotFn vec_dot;          // weights of this type . vec_dot_type; NULL for Q8_1 (ggml has no
                                  // Q8_1 weight kernel either)
  QuantVecDotColsFn vec_dot_cols;  // vec_dot for several activation rows at once; NULL for Q8_1
};

// The traits of Q4_0, Q4_1, Q5_0, Q5_1, Q8_0 or Q8_1; NULL for every other ggml_type (F32 and
// F16 go through the kernels engineer's float paths).
const QuantTypeTraits* GetQuantTypeTraits(ggml_type type);

}  // namespace ggml_cpu

#endif  // GGML_WHISPER_KERNELS_QUANT_TRAITS_H_
