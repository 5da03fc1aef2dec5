// Dispatch wrappers for kernels/vec.h: one HWY_DYNAMIC_DISPATCH per call (per row or per block
// of rows), never per element.
#include "kernels/vec.h"

#include <stddef.h>
#include <stdint.h>

#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "kernels/vec.cc"
#include "hwy/foreach_target.h"  // IWYU pragma: keep
#include "hwy/highway.h"
#include "kernels/vec-inl.h"

HWY_BEFORE_NAMESPACE();
namespace ggml_cpu {
namespace HWY_NAMESPACE {

void AddF32(size_t n, const float* a, const float* b, float* y) {
  BinaryRow(hn::ScalableTag<float>(), n, a, b, y, OpAdd());
}
void MulF32(size_t n, const float* a, const float* b, float* y) {
  BinaryRow(hn::ScalableTag<float>(), n, a, b, y, OpMul());
}
void ScaleF32(size_t n, float s, const float* x, float* y) {
  ScaleRow(hn::ScalableTag<float>(), n, s, x, y);
}
void AddRowsBroadcastF32(size_t n, size_t nrows, const float* x, size_t x_stride, const float* b,
                         float* y, size_t y_stride) {
  for (size_t r = 0; r < nrows; ++r) {
    BinaryRow(hn::ScalableTag<float>(), n, x + r * x_stride, b, y + r * y_stride, OpAdd());
  }
}
void MulRowsBroadcastF32(size_t n, size_t nrows, const float* x, size_t x_stride, const float* b,
                         float* y, size_t y_stride) {
  for (size_t r = 0; r < nrows; ++r) {
    BinaryRow(hn::ScalableTag<float>(), n, x + r * x_stride, b, y + r * y_stride, OpMul());
  }
}
size_t ArgmaxF32(size_t n, const float* x) { return ArgmaxRow(hn::ScalableTag<float>(), n, x); }
float MaxF32(size_t n, const float* x) { return MaxRow(hn::ScalableTag<float>(), n, x); }
size_t FindGreaterF32(size_t n, const float* x, float t) { return FindFirstRow<true>(hn::ScalableTag<float>(), n, x, t); }
void ConvertF32ToF16(size_t n, const float* x, ggml_fp16_t* y) {
  F32ToF16Row(hn::ScalableTag<float>(), n, x, y);
}
void ConvertF16ToF32(size_t n, const ggml_fp16_t* x, float* y) {
  F16ToF32Row(hn::ScalableTag<float>(), n, x, y);
}

}  // namespace HWY_NAMESPACE
}  // namespace ggml_cpu
HWY_AFTER_NAMESPACE();

#if HWY_ONCE
#include "kernels/dispatch.h"

namespace ggml_cpu {

HWY_EXPORT(AddF32);
HWY_EXPORT(MulF32);
HWY_EXPORT(ScaleF32);
HWY_EXPORT(AddRowsBroadcastF32);
HWY_EXPORT(MulRowsBroadcastF32);
HWY_EXPORT(ArgmaxF32);
HWY_EXPORT(MaxF32);
HWY_EXPORT(FindGreaterF32);
HWY_EXPORT(ConvertF32ToF16);
HWY_EXPORT(ConvertF16ToF32);

void AddF32(size_t n, const float* a, const float* b, float* y) {
  InitDispatchOnce();
  HWY_DYNAMIC_DISPATCH(AddF32)(n, a, b, y);
}
void MulF32(size_t n, const float* a, const float* b, float* y) {
  InitDispatchOnce();
  HWY_DYNAMIC_DISPATCH(MulF32)(n, a, b, y);
}
void ScaleF32(size_t n, float s, const float* x, float* y) {
  InitDispatchOnce();
  HWY_DYNAMIC_DISPATCH(ScaleF32)(n, s, x, y);
}
void AddRowsBroadcastF32(size_t n, size_t nrows, const float* x, size_t x_stride, const float* b,
                         float* y, size_t y_stride) {
  InitDispatchOnce();
  HWY_DYNAMIC_DISPATCH(AddRowsBroadcastF32)(n, nrows, x, x_stride, b, y, y_stride);
}
void MulRowsBroadcastF32(size_t n, size_t nrows, const float* x, size_t x_stride, const float* b,
                         float* y, size_t y_stride) {
  InitDispatchOnce();
  HWY_DYNAMIC_DISPATCH(MulRowsBroadcastF32)(n, nrows, x, x_stride, b, y, y_stride);
}
size_t ArgmaxF32(size_t n, const float* x) {
  InitDispatchOnce();
  return HWY_DYNAMIC_DISPATCH(ArgmaxF32)(n, x);
}
float MaxF32(size_t n, const float* x) {
  InitDispatchOnce();
  return HWY_DYNAMIC_DISPATCH(MaxF32)(n, x);
}
size_t FindGreaterF32(size_t n, const float* x, float t) {
  InitDispatchOnce();
  return HWY_DYNAMIC_DISPATCH(FindGreaterF32)(n, x, t);
}
void ConvertF32ToF16(size_t n, const float* x, ggml_fp16_t* y) {
  InitDispatchOnce();
  HWY_DYNAMIC_DISPATCH(ConvertF32ToF16)(n, x, y);
}
void ConvertF16ToF32(size_t n, const ggml_fp16_t* x, float* y) {
  InitDispatchOnce();
  HWY_DYNAMIC_DISPATCH(ConvertF16ToF32)(n, x, y);
}

}  // namespace ggml_cpu
#endif  // HWY_ONCE
