// Dispatch wrappers for kernels/norm.h (one HWY_DYNAMIC_DISPATCH per block of rows).
#include "kernels/norm.h"

#include <stddef.h>

#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "kernels/norm.cc"
#include "hwy/foreach_target.h"  // IWYU pragma: keep
#include "hwy/highway.h"
#include "kernels/norm-inl.h"

HWY_BEFORE_NAMESPACE();
namespace ggml_cpu {
namespace HWY_NAMESPACE {

void LayerNormRowsF32(size_t n, size_t nrows, const float* x, size_t x_stride, float eps,
                      const float* w, const float* b, float* y, size_t y_stride) {
  const hn::ScalableTag<float> d;
  for (size_t r = 0; r < nrows; ++r) LayerNormRow(d, n, x + r * x_stride, eps, w, b, y + r * y_stride);
}

void RmsNormRowsF32(size_t n, size_t nrows, const float* x, size_t x_stride, float eps,
                    const float* w, float* y, size_t y_stride) {
  const hn::ScalableTag<float> d;
  for (size_t r = 0; r < nrows; ++r) RmsNormRow(d, n, x + r * x_stride, eps, w, y + r * y_stride);
}

}  // namespace HWY_NAMESPACE
}  // namespace ggml_cpu
HWY_AFTER_NAMESPACE();

#if HWY_ONCE
#include "kernels/dispatch.h"

namespace ggml_cpu {

HWY_EXPORT(LayerNormRowsF32);
HWY_EXPORT(RmsNormRowsF32);

void LayerNormRowsF32(size_t n, size_t nrows, const float* x, size_t x_stride, float eps,
                      const float* w, const float* b, float* y, size_t y_stride) {
  if (n == 0 || nrows == 0) return;
  InitDispatchOnce();
  HWY_DYNAMIC_DISPATCH(LayerNormRowsF32)(n, nrows, x, x_stride, eps, w, b, y, y_stride);
}

void RmsNormRowsF32(size_t n, size_t nrows, const float* x, size_t x_stride, float eps,
                    const float* w, float* y, size_t y_stride) {
  if (n == 0 || nrows == 0) return;
  InitDispatchOnce();
  HWY_DYNAMIC_DISPATCH(RmsNormRowsF32)(n, nrows, x, x_stride, eps, w, y, y_stride);
}

}  // namespace ggml_cpu
#endif  // HWY_ONCE
