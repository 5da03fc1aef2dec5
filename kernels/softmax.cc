// Dispatch wrapper for kernels/softmax.h (one HWY_DYNAMIC_DISPATCH per block of rows).
#include "kernels/softmax.h"

#include <stddef.h>

#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "kernels/softmax.cc"
#include "hwy/foreach_target.h"  // IWYU pragma: keep
#include "hwy/highway.h"
#include "kernels/softmax-inl.h"

HWY_BEFORE_NAMESPACE();
namespace ggml_cpu {
namespace HWY_NAMESPACE {

void SoftmaxRowsF32(size_t n, size_t row_begin, size_t row_end, const float* x, size_t x_stride,
                    float* y, size_t y_stride, const SoftmaxParams& p) {
  const hn::ScalableTag<float> d;
  for (size_t r = row_begin; r < row_end; ++r) {
    const size_t len = p.causal ? HWY_MIN(n, p.n_past + r + 1) : n;
    const float* mask = p.mask != nullptr ? p.mask + r * p.mask_stride : nullptr;
    SoftmaxRow(d, n, len, x + r * x_stride, mask, p.scale, y + r * y_stride, p.mask_scale);
  }
}

double SumExpShifted(const float* x, size_t n, float shift) {
  const hn::ScalableTag<double> dd;
  return SumExpShiftedF64(dd, x, n, shift);
}

}  // namespace HWY_NAMESPACE
}  // namespace ggml_cpu
HWY_AFTER_NAMESPACE();

#if HWY_ONCE
#include "kernels/dispatch.h"

namespace ggml_cpu {

HWY_EXPORT(SoftmaxRowsF32);
HWY_EXPORT(SumExpShifted);

double SumExpShifted(const float* x, size_t n, float shift) {
  if (n == 0) return 0.0;
  InitDispatchOnce();
  return HWY_DYNAMIC_DISPATCH(SumExpShifted)(x, n, shift);
}

void SoftmaxRowsF32(size_t n, size_t row_begin, size_t row_end, const float* x, size_t x_stride,
                    float* y, size_t y_stride, const SoftmaxParams& params) {
  if (n == 0 || row_begin >= row_end) return;
  InitDispatchOnce();
  HWY_DYNAMIC_DISPATCH(SoftmaxRowsF32)(n, row_begin, row_end, x, x_stride, y, y_stride, params);
}

}  // namespace ggml_cpu
#endif  // HWY_ONCE
