// Per-target row softmax (see kernels/softmax.h). Textual header.
#if defined(GGML_WHISPER_KERNELS_SOFTMAX_INL_H_) == defined(HWY_TARGET_TOGGLE)
#ifdef GGML_WHISPER_KERNELS_SOFTMAX_INL_H_
#undef GGML_WHISPER_KERNELS_SOFTMAX_INL_H_
#else
#define GGML_WHISPER_KERNELS_SOFTMAX_INL_H_
#endif

#include <math.h>
#include <stddef.h>

#include "hwy/contrib/math/math-inl.h"
#include "hwy/highway.h"

HWY_BEFORE_NAMESPACE();
namespace ggml_cpu {
namespace HWY_NAMESPACE {
namespace hn = hwy::HWY_NAMESPACE;

// v = scale * x [+ mask] for one vector.
template <class D>
HWY_INLINE hn::Vec<D> ScaledMasked(D d, const float* x, const float* mask, size_t i, float scale) {
  auto v = hn::Mul(hn::LoadU(d, x + i), hn::Set(d, scale));
  if (mask != nullptr) v = hn::Add(v, hn::LoadU(d, mask + i));
  return v;
}

// exp(v - mx), exactly 0 where v - mx < -87 (including -inf), where Exp's result would be
// subnormal or its input out of range.
template <class D>
HWY_INLINE hn::Vec<D> ExpShifted(D d, hn::Vec<D> v, hn::Vec<D> mx) {
  const auto t = hn::Sub(v, mx);
  const auto tiny = hn::Lt(t, hn::Set(d, -87.0f));
  return hn::IfThenZeroElse(tiny, hn::Exp(d, hn::IfThenElse(tiny, hn::Zero(d), t)));
}

// One row; the first `len` columns take part, the rest are written as 0.
template <class D>
HWY_INLINE void SoftmaxRow(D d, size_t n, size_t len, const float* x, const float* mask,
                           float scale, float* y) {
  const size_t N = hn::Lanes(d);
  const hn::CappedTag<float, 1> d1;
  // Pass 1: the max of v.
  auto vmax = hn::Set(d, -INFINITY);
  size_t i = 0;
  for (; i + N <= len; i += N) vmax = hn::Max(vmax, ScaledMasked(d, x, mask, i, scale));
  float mx = hn::GetLane(hn::MaxOfLanes(d, vmax));
  for (; i < len; ++i) mx = HWY_MAX(mx, hn::GetLane(ScaledMasked(d1, x, mask, i, scale)));
  if (!(mx > -INFINITY)) {  // nothing finite (or NaN max): all zeros
    for (size_t j = 0; j < n; ++j) y[j] = 0.0f;
    return;
  }
  // Pass 2: y = exp(v - max) and its sum.
  const auto vmx = hn::Set(d, mx);
  auto vsum = hn::Zero(d);
  i = 0;
  for (; i + N <= len; i += N) {
    const auto e = ExpShifted(d, ScaledMasked(d, x, mask, i, scale), vmx);
    hn::StoreU(e, d, y + i);
    vsum = hn::Add(vsum, e);
  }
  float sum = hn::GetLane(hn::SumOfLanes(d, vsum));
  for (; i < len; ++i) {
    const auto e = ExpShifted(d1, ScaledMasked(d1, x, mask, i, scale), hn::Set(d1, mx));
    hn::StoreU(e, d1, y + i);
    sum += hn::GetLane(e);
  }
  // Pass 3: normalize; columns past `len` are 0.
  const float inv = 1.0f / sum;
  const auto vinv = hn::Set(d, inv);
  i = 0;
  for (; i + N <= len; i += N) hn::StoreU(hn::Mul(hn::LoadU(d, y + i), vinv), d, y + i);
  for (; i < len; ++i) y[i] *= inv;
  for (; i < n; ++i) y[i] = 0.0f;
}

}  // namespace HWY_NAMESPACE
}  // namespace ggml_cpu
HWY_AFTER_NAMESPACE();

#endif  // GGML_WHISPER_KERNELS_SOFTMAX_INL_H_
