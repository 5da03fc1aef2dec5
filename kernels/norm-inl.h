// Per-target row normalization (see kernels/norm.h). Textual header.
#if defined(GGML_WHISPER_KERNELS_NORM_INL_H_) == defined(HWY_TARGET_TOGGLE)
#ifdef GGML_WHISPER_KERNELS_NORM_INL_H_
#undef GGML_WHISPER_KERNELS_NORM_INL_H_
#else
#define GGML_WHISPER_KERNELS_NORM_INL_H_
#endif

#include <math.h>
#include <stddef.h>

#include "hwy/highway.h"
#include "kernels/vec-inl.h"

HWY_BEFORE_NAMESPACE();
namespace ggml_cpu {
namespace HWY_NAMESPACE {
namespace hn = hwy::HWY_NAMESPACE;

// sum_i (x[i] - mean)^2 with two vector accumulators.
template <class D>
HWY_INLINE float SumSquaredDeviations(D d, size_t n, const float* HWY_RESTRICT x, float mean) {
  const size_t N = hn::Lanes(d);
  const auto vm = hn::Set(d, mean);
  auto s0 = hn::Zero(d), s1 = hn::Zero(d);
  size_t i = 0;
  for (; i + 2 * N <= n; i += 2 * N) {
    const auto a = hn::Sub(hn::LoadU(d, x + i), vm);
    const auto b = hn::Sub(hn::LoadU(d, x + i + N), vm);
    s0 = hn::MulAdd(a, a, s0);
    s1 = hn::MulAdd(b, b, s1);
  }
  for (; i + N <= n; i += N) {
    const auto a = hn::Sub(hn::LoadU(d, x + i), vm);
    s0 = hn::MulAdd(a, a, s0);
  }
  float sum = hn::GetLane(hn::SumOfLanes(d, hn::Add(s0, s1)));
  for (; i < n; ++i) sum += (x[i] - mean) * (x[i] - mean);
  return sum;
}

// y[i] = ((x[i] - shift) * scale) [* w[i]] [+ b[i]]; one template for every w/b combination.
template <class D>
HWY_INLINE void ShiftScaleAffine(D d, size_t n, const float* x, float shift, float scale,
                                 const float* w, const float* b, float* y) {
  const size_t N = hn::Lanes(d);
  const auto vs = hn::Set(d, shift), vc = hn::Set(d, scale);
  size_t i = 0;
  for (; i + N <= n; i += N) {
    auto v = hn::Mul(hn::Sub(hn::LoadU(d, x + i), vs), vc);
    if (w != nullptr) v = hn::Mul(v, hn::LoadU(d, w + i));
    if (b != nullptr) v = hn::Add(v, hn::LoadU(d, b + i));
    hn::StoreU(v, d, y + i);
  }
  for (; i < n; ++i) {
    float v = (x[i] - shift) * scale;
    if (w != nullptr) v *= w[i];
    if (b != nullptr) v += b[i];
    y[i] = v;
  }
}

template <class D>
HWY_INLINE void LayerNormRow(D d, size_t n, const float* x, float eps, const float* w,
                             const float* b, float* y) {
  const float mean = SumRow(d, n, x) / static_cast<float>(n);
  const float var = SumSquaredDeviations(d, n, x, mean) / static_cast<float>(n);
  ShiftScaleAffine(d, n, x, mean, 1.0f / sqrtf(var + eps), w, b, y);
}

template <class D>
HWY_INLINE void RmsNormRow(D d, size_t n, const float* x, float eps, const float* w, float* y) {
  const float mean_sq = DotRow(d, n, x, x) / static_cast<float>(n);
  ShiftScaleAffine(d, n, x, 0.0f, 1.0f / sqrtf(mean_sq + eps), w, nullptr, y);
}

}  // namespace HWY_NAMESPACE
}  // namespace ggml_cpu
HWY_AFTER_NAMESPACE();

#endif  // GGML_WHISPER_KERNELS_NORM_INL_H_
