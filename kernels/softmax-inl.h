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

// v = scale * x [+ mask_scale * mask] for one vector.
template <class D>
HWY_INLINE hn::Vec<D> ScaledMasked(D d, const float* x, const float* mask, size_t i, float scale,
                                   float mask_scale = 1.0f) {
  auto v = hn::Mul(hn::LoadU(d, x + i), hn::Set(d, scale));
  if (mask != nullptr) {
    const auto m = hn::LoadU(d, mask + i);
    v = mask_scale == 1.0f ? hn::Add(v, m) : hn::MulAdd(m, hn::Set(d, mask_scale), v);
  }
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
                           float scale, float* y, float mask_scale = 1.0f) {
  const size_t N = hn::Lanes(d);
  const hn::CappedTag<float, 1> d1;
  // Pass 1: the max of v, and whether any v is NaN (Max does not propagate NaN).
  auto vmax = hn::Set(d, -INFINITY);
  auto vnan = hn::IsNaN(vmax);  // all false
  size_t i = 0;
  for (; i + N <= len; i += N) {
    const auto v = ScaledMasked(d, x, mask, i, scale, mask_scale);
    vmax = hn::Max(vmax, v);
    vnan = hn::Or(vnan, hn::IsNaN(v));
  }
  float mx = hn::GetLane(hn::MaxOfLanes(d, vmax));
  bool nan = !hn::AllFalse(d, vnan);
  for (; i < len; ++i) {
    const float v = hn::GetLane(ScaledMasked(d1, x, mask, i, scale, mask_scale));
    mx = HWY_MAX(mx, v);
    nan = nan || v != v;
  }
  if (nan) {  // a NaN score (a corrupt weight): the row is NaN, so the check downstream sees it
    for (size_t j = 0; j < n; ++j) y[j] = j < len ? NAN : 0.0f;
    return;
  }
  if (!(mx > -INFINITY)) {  // nothing but -inf (all masked): all zeros
    for (size_t j = 0; j < n; ++j) y[j] = 0.0f;
    return;
  }
  // Pass 2: y = exp(v - max) and its sum.
  const auto vmx = hn::Set(d, mx);
  auto vsum = hn::Zero(d);
  i = 0;
  for (; i + N <= len; i += N) {
    const auto e = ExpShifted(d, ScaledMasked(d, x, mask, i, scale, mask_scale), vmx);
    hn::StoreU(e, d, y + i);
    vsum = hn::Add(vsum, e);
  }
  float sum = hn::GetLane(hn::SumOfLanes(d, vsum));
  for (; i < len; ++i) {
    const auto e = ExpShifted(d1, ScaledMasked(d1, x, mask, i, scale, mask_scale), hn::Set(d1, mx));
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

// sum_i exp(double(x[i] - shift)) (see softmax.h SumExpShifted): the differences in f32, the
// exp and the sum in f64 (half-width f32 vectors promoted to full f64 vectors).
template <class DD>
HWY_INLINE double SumExpShiftedF64(DD dd, const float* HWY_RESTRICT x, size_t n, float shift) {
  const hn::Rebind<float, DD> df;
  const size_t N = hn::Lanes(dd);
  const auto vshift = hn::Set(df, shift);
  const auto floor = hn::Set(dd, -708.0);  // exp below is < DBL_MIN: adds nothing to a sum >= 1
  auto s0 = hn::Zero(dd), s1 = hn::Zero(dd);
  size_t i = 0;
  for (; i + 2 * N <= n; i += 2 * N) {
    const auto t0 = hn::PromoteTo(dd, hn::Sub(hn::LoadU(df, x + i), vshift));
    const auto t1 = hn::PromoteTo(dd, hn::Sub(hn::LoadU(df, x + i + N), vshift));
    // Exp's input kept in range; a NaN lane is added as itself (Exp would not propagate it).
    const auto tiny0 = hn::Lt(t0, floor), tiny1 = hn::Lt(t1, floor);
    const auto e0 = hn::IfThenZeroElse(tiny0, hn::Exp(dd, hn::IfThenZeroElse(tiny0, t0)));
    const auto e1 = hn::IfThenZeroElse(tiny1, hn::Exp(dd, hn::IfThenZeroElse(tiny1, t1)));
    s0 = hn::Add(s0, hn::IfThenElse(hn::IsNaN(t0), t0, e0));
    s1 = hn::Add(s1, hn::IfThenElse(hn::IsNaN(t1), t1, e1));
  }
  double sum = hn::GetLane(hn::SumOfLanes(dd, hn::Add(s0, s1)));
  for (; i < n; ++i) {
    const double t = static_cast<double>(x[i] - shift);
    if (t >= -708.0 || t != t) sum += exp(t);
  }
  return sum;
}

}  // namespace HWY_NAMESPACE
}  // namespace ggml_cpu
HWY_AFTER_NAMESPACE();

#endif  // GGML_WHISPER_KERNELS_SOFTMAX_INL_H_
