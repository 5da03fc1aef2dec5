#include "kernels/quant_ops.h"

// Compiles quant_ops-inl.h once per Highway target (hwy/examples/skeleton.cc pattern).
#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "kernels/quant_ops.cc"
#include "hwy/foreach_target.h"  // IWYU pragma: keep

#include "hwy/highway.h"
#include "kernels/dispatch.h"
#include "kernels/quant_ops-inl.h"

HWY_BEFORE_NAMESPACE();
namespace ggml_cpu {
namespace HWY_NAMESPACE {

// Non-template per-target entry points for HWY_EXPORT.
void QuantizeRowQ8_0(const float* x, block_q8_0* y, int64_t k) {
  QuantizeRowQ8</*kWithSum=*/false>(x, y, k);
}
void QuantizeRowQ8_1(const float* x, block_q8_1* y, int64_t k) {
  QuantizeRowQ8</*kWithSum=*/true>(x, y, k);
}

void VecDotQ4_0Q8_0(int64_t n, int64_t nrows, const block_q4_0* x, size_t x_nb1,
                    const block_q8_0* y, float* s) {
  VecDotRows<DecodeQ4_0>(n, nrows, x, x_nb1, y, s);
}
void VecDotQ4_1Q8_1(int64_t n, int64_t nrows, const block_q4_1* x, size_t x_nb1,
                    const block_q8_1* y, float* s) {
  VecDotRows<DecodeQ4_1>(n, nrows, x, x_nb1, y, s);
}
void VecDotQ5_0Q8_0(int64_t n, int64_t nrows, const block_q5_0* x, size_t x_nb1,
                    const block_q8_0* y, float* s) {
  VecDotRows<DecodeQ5_0>(n, nrows, x, x_nb1, y, s);
}
void VecDotQ5_1Q8_1(int64_t n, int64_t nrows, const block_q5_1* x, size_t x_nb1,
                    const block_q8_1* y, float* s) {
  VecDotRows<DecodeQ5_1>(n, nrows, x, x_nb1, y, s);
}
void VecDotQ8_0Q8_0(int64_t n, int64_t nrows, const block_q8_0* x, size_t x_nb1,
                    const block_q8_0* y, float* s) {
  VecDotRows<DecodeQ8_0>(n, nrows, x, x_nb1, y, s);
}

// The same against ncols activation rows y_stride bytes apart, c[col * lds + row].
void VecDotColsQ4_0Q8_0(int64_t n, int64_t nrows, const block_q4_0* x, size_t x_nb1,
                        const block_q8_0* y, size_t y_stride, int64_t ncols, float* s, size_t lds) {
  VecDotRowsCols<DecodeQ4_0>(n, nrows, x, x_nb1, y, y_stride, ncols, s, lds);
}
void VecDotColsQ4_1Q8_1(int64_t n, int64_t nrows, const block_q4_1* x, size_t x_nb1,
                        const block_q8_1* y, size_t y_stride, int64_t ncols, float* s, size_t lds) {
  VecDotRowsCols<DecodeQ4_1>(n, nrows, x, x_nb1, y, y_stride, ncols, s, lds);
}
void VecDotColsQ5_0Q8_0(int64_t n, int64_t nrows, const block_q5_0* x, size_t x_nb1,
                        const block_q8_0* y, size_t y_stride, int64_t ncols, float* s, size_t lds) {
  VecDotRowsCols<DecodeQ5_0>(n, nrows, x, x_nb1, y, y_stride, ncols, s, lds);
}
void VecDotColsQ5_1Q8_1(int64_t n, int64_t nrows, const block_q5_1* x, size_t x_nb1,
                        const block_q8_1* y, size_t y_stride, int64_t ncols, float* s, size_t lds) {
  VecDotRowsCols<DecodeQ5_1>(n, nrows, x, x_nb1, y, y_stride, ncols, s, lds);
}
void VecDotColsQ8_0Q8_0(int64_t n, int64_t nrows, const block_q8_0* x, size_t x_nb1,
                        const block_q8_0* y, size_t y_stride, int64_t ncols, float* s, size_t lds) {
  VecDotRowsCols<DecodeQ8_0>(n, nrows, x, x_nb1, y, y_stride, ncols, s, lds);
}

// NOLINTNEXTLINE(google-readability-namespace-comments)
}  // namespace HWY_NAMESPACE
}  // namespace ggml_cpu
HWY_AFTER_NAMESPACE();

#if HWY_ONCE
namespace ggml_cpu {

HWY_EXPORT(QuantizeRowQ8_0);
HWY_EXPORT(QuantizeRowQ8_1);
HWY_EXPORT(VecDotQ4_0Q8_0);
HWY_EXPORT(VecDotQ4_1Q8_1);
HWY_EXPORT(VecDotQ5_0Q8_0);
HWY_EXPORT(VecDotQ5_1Q8_1);
HWY_EXPORT(VecDotQ8_0Q8_0);
HWY_EXPORT(VecDotColsQ4_0Q8_0);
HWY_EXPORT(VecDotColsQ4_1Q8_1);
HWY_EXPORT(VecDotColsQ5_0Q8_0);
HWY_EXPORT(VecDotColsQ5_1Q8_1);
HWY_EXPORT(VecDotColsQ8_0Q8_0);

void quantize_row_q8_0(const float* x, block_q8_0* y, int64_t k) {
  HWY_DASSERT(k >= 0 && k % kQK == 0);
  InitDispatchOnce();
  HWY_DYNAMIC_DISPATCH(QuantizeRowQ8_0)(x, y, k);
}
void quantize_row_q8_1(const float* x, block_q8_1* y, int64_t k) {
  HWY_DASSERT(k >= 0 && k % kQK == 0);
  InitDispatchOnce();
  HWY_DYNAMIC_DISPATCH(QuantizeRowQ8_1)(x, y, k);
}

void vec_dot_q4_0_q8_0(int64_t n, int64_t nrows, const block_q4_0* x, size_t x_nb1,
                       const block_q8_0* y, float* s) {
  HWY_DASSERT(n >= 0 && n % kQK == 0 && nrows >= 0);
  InitDispatchOnce();
  HWY_DYNAMIC_DISPATCH(VecDotQ4_0Q8_0)(n, nrows, x, x_nb1, y, s);
}
void vec_dot_q4_1_q8_1(int64_t n, int64_t nrows, const block_q4_1* x, size_t x_nb1,
                       const block_q8_1* y, float* s) {
  HWY_DASSERT(n >= 0 && n % kQK == 0 && nrows >= 0);
  InitDispatchOnce();
  HWY_DYNAMIC_DISPATCH(VecDotQ4_1Q8_1)(n, nrows, x, x_nb1, y, s);
}
void vec_dot_q5_0_q8_0(int64_t n, int64_t nrows, const block_q5_0* x, size_t x_nb1,
                       const block_q8_0* y, float* s) {
  HWY_DASSERT(n >= 0 && n % kQK == 0 && nrows >= 0);
  InitDispatchOnce();
  HWY_DYNAMIC_DISPATCH(VecDotQ5_0Q8_0)(n, nrows, x, x_nb1, y, s);
}
void vec_dot_q5_1_q8_1(int64_t n, int64_t nrows, const block_q5_1* x, size_t x_nb1,
                       const block_q8_1* y, float* s) {
  HWY_DASSERT(n >= 0 && n % kQK == 0 && nrows >= 0);
  InitDispatchOnce();
  HWY_DYNAMIC_DISPATCH(VecDotQ5_1Q8_1)(n, nrows, x, x_nb1, y, s);
}
void vec_dot_q8_0_q8_0(int64_t n, int64_t nrows, const block_q8_0* x, size_t x_nb1,
                       const block_q8_0* y, float* s) {
  HWY_DASSERT(n >= 0 && n % kQK == 0 && nrows >= 0);
  InitDispatchOnce();
  HWY_DYNAMIC_DISPATCH(VecDotQ8_0Q8_0)(n, nrows, x, x_nb1, y, s);
}

void vec_dot_cols_q4_0_q8_0(int64_t n, int64_t nrows, const block_q4_0* x, size_t x_nb1,
                            const block_q8_0* y, size_t y_stride, int64_t ncols, float* s, size_t lds) {
  HWY_DASSERT(n >= 0 && n % kQK == 0 && nrows >= 0 && ncols >= 0);
  InitDispatchOnce();
  HWY_DYNAMIC_DISPATCH(VecDotColsQ4_0Q8_0)(n, nrows, x, x_nb1, y, y_stride, ncols, s, lds);
}
void vec_dot_cols_q4_1_q8_1(int64_t n, int64_t nrows, const block_q4_1* x, size_t x_nb1,
                            const block_q8_1* y, size_t y_stride, int64_t ncols, float* s, size_t lds) {
  HWY_DASSERT(n >= 0 && n % kQK == 0 && nrows >= 0 && ncols >= 0);
  InitDispatchOnce();
  HWY_DYNAMIC_DISPATCH(VecDotColsQ4_1Q8_1)(n, nrows, x, x_nb1, y, y_stride, ncols, s, lds);
}
void vec_dot_cols_q5_0_q8_0(int64_t n, int64_t nrows, const block_q5_0* x, size_t x_nb1,
                            const block_q8_0* y, size_t y_stride, int64_t ncols, float* s, size_t lds) {
  HWY_DASSERT(n >= 0 && n % kQK == 0 && nrows >= 0 && ncols >= 0);
  InitDispatchOnce();
  HWY_DYNAMIC_DISPATCH(VecDotColsQ5_0Q8_0)(n, nrows, x, x_nb1, y, y_stride, ncols, s, lds);
}
void vec_dot_cols_q5_1_q8_1(int64_t n, int64_t nrows, const block_q5_1* x, size_t x_nb1,
                            const block_q8_1* y, size_t y_stride, int64_t ncols, float* s, size_t lds) {
  HWY_DASSERT(n >= 0 && n % kQK == 0 && nrows >= 0 && ncols >= 0);
  InitDispatchOnce();
  HWY_DYNAMIC_DISPATCH(VecDotColsQ5_1Q8_1)(n, nrows, x, x_nb1, y, y_stride, ncols, s, lds);
}
void vec_dot_cols_q8_0_q8_0(int64_t n, int64_t nrows, const block_q8_0* x, size_t x_nb1,
                            const block_q8_0* y, size_t y_stride, int64_t ncols, float* s, size_t lds) {
  HWY_DASSERT(n >= 0 && n % kQK == 0 && nrows >= 0 && ncols >= 0);
  InitDispatchOnce();
  HWY_DYNAMIC_DISPATCH(VecDotColsQ8_0Q8_0)(n, nrows, x, x_nb1, y, y_stride, ncols, s, lds);
}

}  // namespace ggml_cpu
#endif  // HWY_ONCE
