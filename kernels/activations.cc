// Dispatch wrappers for kernels/activations.h (one HWY_DYNAMIC_DISPATCH per row).
#include "kernels/activations.h"

#include <stddef.h>

#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "kernels/activations.cc"
#include "hwy/foreach_target.h"  // IWYU pragma: keep
#include "hwy/highway.h"
#include "kernels/activations-inl.h"

HWY_BEFORE_NAMESPACE();
namespace ggml_cpu {
namespace HWY_NAMESPACE {

void GeluTanhF32(size_t n, const float* x, float* y) {
  UnaryRow(hn::ScalableTag<float>(), n, x, y, GeluTanhOp());
}
void GeluErfF32(size_t n, const float* x, float* y) {
  UnaryRow(hn::ScalableTag<float>(), n, x, y, GeluErfOp());
}
void SiluF32(size_t n, const float* x, float* y) {
  UnaryRow(hn::ScalableTag<float>(), n, x, y, SiluOp());
}
void ReluF32(size_t n, const float* x, float* y) {
  UnaryRow(hn::ScalableTag<float>(), n, x, y, ReluOp());
}
void SigmoidF32(size_t n, const float* x, float* y) {
  UnaryRow(hn::ScalableTag<float>(), n, x, y, SigmoidOp());
}
void TanhF32(size_t n, const float* x, float* y) {
  UnaryRow(hn::ScalableTag<float>(), n, x, y, TanhOp());
}
void SqrF32(size_t n, const float* x, float* y) {
  UnaryRow(hn::ScalableTag<float>(), n, x, y, SqrOp());
}
void SqrtF32(size_t n, const float* x, float* y) {
  UnaryRow(hn::ScalableTag<float>(), n, x, y, SqrtOp());
}

}  // namespace HWY_NAMESPACE
}  // namespace ggml_cpu
HWY_AFTER_NAMESPACE();

#if HWY_ONCE
#include "kernels/dispatch.h"

namespace ggml_cpu {

HWY_EXPORT(GeluTanhF32);
HWY_EXPORT(GeluErfF32);
HWY_EXPORT(SiluF32);
HWY_EXPORT(ReluF32);
HWY_EXPORT(SigmoidF32);
HWY_EXPORT(TanhF32);
HWY_EXPORT(SqrF32);
HWY_EXPORT(SqrtF32);

void GeluF32(size_t n, const float* x, float* y, GeluMode mode) {
  InitDispatchOnce();
  if (mode == GeluMode::kErf) {
    HWY_DYNAMIC_DISPATCH(GeluErfF32)(n, x, y);
  } else {
    HWY_DYNAMIC_DISPATCH(GeluTanhF32)(n, x, y);
  }
}

void SiluF32(size_t n, const float* x, float* y) {
  InitDispatchOnce();
  HWY_DYNAMIC_DISPATCH(SiluF32)(n, x, y);
}
void ReluF32(size_t n, const float* x, float* y) {
  InitDispatchOnce();
  HWY_DYNAMIC_DISPATCH(ReluF32)(n, x, y);
}
void SigmoidF32(size_t n, const float* x, float* y) {
  InitDispatchOnce();
  HWY_DYNAMIC_DISPATCH(SigmoidF32)(n, x, y);
}
void TanhF32(size_t n, const float* x, float* y) {
  InitDispatchOnce();
  HWY_DYNAMIC_DISPATCH(TanhF32)(n, x, y);
}
void SqrF32(size_t n, const float* x, float* y) {
  InitDispatchOnce();
  HWY_DYNAMIC_DISPATCH(SqrF32)(n, x, y);
}
void SqrtF32(size_t n, const float* x, float* y) {
  InitDispatchOnce();
  HWY_DYNAMIC_DISPATCH(SqrtF32)(n, x, y);
}

}  // namespace ggml_cpu
#endif  // HWY_ONCE
