// Per-target implementations of the kernels declared in kernels/vec.h, as inline templates on a
// Highway descriptor so other families (norm, softmax, matmul) reuse them without another
// dispatch. Textual header: include after hwy/highway.h inside the foreach_target dance.
#if defined(GGML_WHISPER_KERNELS_VEC_INL_H_) == defined(HWY_TARGET_TOGGLE)
#ifdef GGML_WHISPER_KERNELS_VEC_INL_H_
#undef GGML_WHISPER_KERNELS_VEC_INL_H_
#else
#define GGML_WHISPER_KERNELS_VEC_INL_H_
#endif

#include <math.h>
#include <stddef.h>
#include <stdint.h>

#include "ggml/fp16.h"
#include "hwy/highway.h"
#include "kernels/fp16-inl.h"

HWY_BEFORE_NAMESPACE();
namespace ggml_cpu {
namespace HWY_NAMESPACE {
namespace hn = hwy::HWY_NAMESPACE;

// Elementwise binary operations as functors (GCC applies the target pragma to these, which is
// not guaranteed for lambdas).
struct OpAdd {
  template <class D, class V>
  HWY_INLINE V operator()(D, V a, V b) const { return hn::Add(a, b); }
};
struct OpMul {
  template <class D, class V>
  HWY_INLINE V operator()(D, V a, V b) const { return hn::Mul(a, b); }
};

// y[i] = op(a[i], b[i]) for i < n: full vectors, then single lanes (no reads past n).
template <class D, class Op>
HWY_INLINE void BinaryRow(D d, size_t n, const float* a, const float* b, float* y, Op op) {
  const size_t N = hn::Lanes(d);
  size_t i = 0;
  for (; i + N <= n; i += N) {
    hn::StoreU(op(d, hn::LoadU(d, a + i), hn::LoadU(d, b + i)), d, y + i);
  }
  const hn::CappedTag<float, 1> d1;
  for (; i < n; ++i) {
    hn::StoreU(op(d1, hn::LoadU(d1, a + i), hn::LoadU(d1, b + i)), d1, y + i);
  }
}

// y[i] = s * x[i].
template <class D>
HWY_INLINE void ScaleRow(D d, size_t n, float s, const float* x, float* y) {
  const size_t N = hn::Lanes(d);
  const auto vs = hn::Set(d, s);
  size_t i = 0;
  for (; i + N <= n; i += N) hn::StoreU(hn::Mul(vs, hn::LoadU(d, x + i)), d, y + i);
  for (; i < n; ++i) y[i] = s * x[i];
}

// Loads N f32 lanes; the f16 overload widens exactly. Lets one dot template serve both types.
template <class D>
HWY_INLINE hn::Vec<D> LoadAsF32(D d, const float* HWY_RESTRICT p) {
  return hn::LoadU(d, p);
}
template <class D>
HWY_INLINE hn::Vec<D> LoadAsF32(D d, const uint16_t* HWY_RESTRICT p) {
  return LoadF16AsF32(d, p);
}
HWY_INLINE float ScalarAsF32(float x) { return x; }
HWY_INLINE float ScalarAsF32(uint16_t h) { return ggml_fp16_to_fp32(h); }

// sum_i a[i] * b[i] with four vector accumulators (hides FMA latency), then one reduction.
// TA is float or uint16_t (f16 bits).
template <class D, typename TA>
HWY_INLINE float DotRow(D d, size_t n, const TA* HWY_RESTRICT a, const float* HWY_RESTRICT b) {
  const size_t N = hn::Lanes(d);
  auto s0 = hn::Zero(d), s1 = hn::Zero(d), s2 = hn::Zero(d), s3 = hn::Zero(d);
  size_t i = 0;
  for (; i + 4 * N <= n; i += 4 * N) {
    s0 = hn::MulAdd(LoadAsF32(d, a + i), hn::LoadU(d, b + i), s0);
    s1 = hn::MulAdd(LoadAsF32(d, a + i + N), hn::LoadU(d, b + i + N), s1);
    s2 = hn::MulAdd(LoadAsF32(d, a + i + 2 * N), hn::LoadU(d, b + i + 2 * N), s2);
    s3 = hn::MulAdd(LoadAsF32(d, a + i + 3 * N), hn::LoadU(d, b + i + 3 * N), s3);
  }
  for (; i + N <= n; i += N) s0 = hn::MulAdd(LoadAsF32(d, a + i), hn::LoadU(d, b + i), s0);
  s0 = hn::Add(hn::Add(s0, s1), hn::Add(s2, s3));
  float sum = hn::GetLane(hn::SumOfLanes(d, s0));
  for (; i < n; ++i) sum += ScalarAsF32(a[i]) * b[i];
  return sum;
}

template <class D>
HWY_INLINE float SumRow(D d, size_t n, const float* HWY_RESTRICT x) {
  const size_t N = hn::Lanes(d);
  auto s0 = hn::Zero(d), s1 = hn::Zero(d);
  size_t i = 0;
  for (; i + 2 * N <= n; i += 2 * N) {
    s0 = hn::Add(s0, hn::LoadU(d, x + i));
    s1 = hn::Add(s1, hn::LoadU(d, x + i + N));
  }
  for (; i + N <= n; i += N) s0 = hn::Add(s0, hn::LoadU(d, x + i));
  float sum = hn::GetLane(hn::SumOfLanes(d, hn::Add(s0, s1)));
  for (; i < n; ++i) sum += x[i];
  return sum;
}

template <class D>
HWY_INLINE float MaxRow(D d, size_t n, const float* HWY_RESTRICT x) {
  const size_t N = hn::Lanes(d);
  auto m = hn::Set(d, -INFINITY);
  size_t i = 0;
  for (; i + N <= n; i += N) m = hn::Max(m, hn::LoadU(d, x + i));
  float mx = hn::GetLane(hn::MaxOfLanes(d, m));
  for (; i < n; ++i) mx = x[i] > mx ? x[i] : mx;
  return mx;
}

// The first i with x[i] > t (kGreater) or x[i] == t, or n: a vectorized compare, the first
// true lane. NaN compares false.
template <bool kGreater, class D>
HWY_INLINE size_t FindFirstRow(D d, size_t n, const float* HWY_RESTRICT x, float t) {
  const size_t N = hn::Lanes(d);
  const auto vt = hn::Set(d, t);
  size_t i = 0;
  for (; i + N <= n; i += N) {
    const auto v = hn::LoadU(d, x + i);
    const intptr_t pos = hn::FindFirstTrue(d, kGreater ? hn::Gt(v, vt) : hn::Eq(v, vt));
    if (pos >= 0) return i + static_cast<size_t>(pos);
  }
  for (; i < n; ++i) {
    if (kGreater ? x[i] > t : x[i] == t) return i;
  }
  return n;
}

// Two passes: the max, then the first index holding it (0 if none does: NaN input).
template <class D>
HWY_INLINE size_t ArgmaxRow(D d, size_t n, const float* HWY_RESTRICT x) {
  const size_t i = FindFirstRow<false>(d, n, x, MaxRow(d, n, x));
  return i < n ? i : 0;
}

template <class D>
HWY_INLINE void F32ToF16Row(D d, size_t n, const float* HWY_RESTRICT x, uint16_t* HWY_RESTRICT y) {
  const size_t N = hn::Lanes(d);
  size_t i = 0;
  for (; i + N <= n; i += N) StoreF32AsF16(d, hn::LoadU(d, x + i), y + i);
  const hn::CappedTag<float, 1> d1;
  for (; i < n; ++i) StoreF32AsF16(d1, hn::LoadU(d1, x + i), y + i);
}

template <class D>
HWY_INLINE void F16ToF32Row(D d, size_t n, const uint16_t* HWY_RESTRICT x, float* HWY_RESTRICT y) {
  const size_t N = hn::Lanes(d);
  size_t i = 0;
  for (; i + N <= n; i += N) hn::StoreU(LoadF16AsF32(d, x + i), d, y + i);
  const hn::CappedTag<float, 1> d1;
  for (; i < n; ++i) hn::StoreU(LoadF16AsF32(d1, x + i), d1, y + i);
}

}  // namespace HWY_NAMESPACE
}  // namespace ggml_cpu
HWY_AFTER_NAMESPACE();

#endif  // GGML_WHISPER_KERNELS_VEC_INL_H_
