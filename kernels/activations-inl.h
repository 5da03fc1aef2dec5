// Per-target activation functions on one vector (see kernels/activations.h). Textual header.
#if defined(GGML_WHISPER_KERNELS_ACTIVATIONS_INL_H_) == defined(HWY_TARGET_TOGGLE)
#ifdef GGML_WHISPER_KERNELS_ACTIVATIONS_INL_H_
#undef GGML_WHISPER_KERNELS_ACTIVATIONS_INL_H_
#else
#define GGML_WHISPER_KERNELS_ACTIVATIONS_INL_H_
#endif

#include <stddef.h>

#include "hwy/contrib/math/math-inl.h"
#include "hwy/highway.h"

HWY_BEFORE_NAMESPACE();
namespace ggml_cpu {
namespace HWY_NAMESPACE {
namespace hn = hwy::HWY_NAMESPACE;

// GELU, tanh form: x * sigmoid(2u), u = sqrt(2/pi) x (1 + 0.044715 x^2); ggml's cut-offs.
template <class D, class V>
HWY_INLINE V GeluTanh(D d, V x) {
  const V u = hn::Mul(hn::Mul(hn::Set(d, 0.7978845608028654f), x),
                      hn::MulAdd(hn::Set(d, 0.044715f), hn::Mul(x, x), hn::Set(d, 1.0f)));
  // |x| < 10 keeps |2u| < 88, so exp stays finite.
  const V e = hn::Exp(d, hn::Mul(hn::Set(d, -2.0f), u));
  V y = hn::Div(x, hn::Add(hn::Set(d, 1.0f), e));
  y = hn::IfThenElse(hn::Ge(x, hn::Set(d, 10.0f)), x, y);
  return hn::IfThenZeroElse(hn::Le(x, hn::Set(d, -10.0f)), y);
}

// erfc(z) for z >= 0 (Numerical Recipes "erfcc"): t exp(-z^2 + P(t)), t = 1 / (1 + z/2).
template <class D, class V>
HWY_INLINE V ErfcNonNegative(D d, V z) {
  const V t = hn::Div(hn::Set(d, 1.0f), hn::MulAdd(hn::Set(d, 0.5f), z, hn::Set(d, 1.0f)));
  V p = hn::Set(d, 0.17087277f);
  p = hn::MulAdd(p, t, hn::Set(d, -0.82215223f));
  p = hn::MulAdd(p, t, hn::Set(d, 1.48851587f));
  p = hn::MulAdd(p, t, hn::Set(d, -1.13520398f));
  p = hn::MulAdd(p, t, hn::Set(d, 0.27886807f));
  p = hn::MulAdd(p, t, hn::Set(d, -0.18628806f));
  p = hn::MulAdd(p, t, hn::Set(d, 0.09678418f));
  p = hn::MulAdd(p, t, hn::Set(d, 0.37409196f));
  p = hn::MulAdd(p, t, hn::Set(d, 1.00002368f));
  p = hn::MulAdd(p, t, hn::Set(d, -1.26551223f));
  return hn::Mul(t, hn::Exp(d, hn::Sub(p, hn::Mul(z, z))));
}

// GELU, erf form: 0.5 x erfc(-x / sqrt(2)); erfc(-a) = 2 - erfc(a) for a > 0.
template <class D, class V>
HWY_INLINE V GeluErf(D d, V x) {
  const V z = hn::Mul(x, hn::Set(d, -0.7071067811865476f));
  // |z| <= 10: erfc(10) ~ 2e-45 is already 0 in f32; keeps exp's argument in range.
  const V az = hn::Min(hn::Abs(z), hn::Set(d, 10.0f));
  const V e = ErfcNonNegative(d, az);
  const V erfc = hn::IfThenElse(hn::Lt(z, hn::Zero(d)), hn::Sub(hn::Set(d, 2.0f), e), e);
  return hn::Mul(hn::Mul(hn::Set(d, 0.5f), x), erfc);
}

// SiLU: x / (1 + exp(-x)); -x is capped at 88 so exp stays finite (the result is then
// x * 6e-39, i.e. 0 to within f32 range).
template <class D, class V>
HWY_INLINE V Silu(D d, V x) {
  const V e = hn::Exp(d, hn::Min(hn::Neg(x), hn::Set(d, 88.0f)));
  return hn::Div(x, hn::Add(hn::Set(d, 1.0f), e));
}

// max(x, 0), NaN kept (IfThenElse on x > 0 would turn NaN into 0).
template <class D, class V>
HWY_INLINE V Relu(D d, V x) {
  return hn::IfThenZeroElse(hn::Lt(x, hn::Zero(d)), x);
}

// 1 / (1 + exp(-x)); -x is capped at 88 so exp stays finite (the result is then ~6e-39).
template <class D, class V>
HWY_INLINE V Sigmoid(D d, V x) {
  const V e = hn::Exp(d, hn::Min(hn::Neg(x), hn::Set(d, 88.0f)));
  return hn::Div(hn::Set(d, 1.0f), hn::Add(hn::Set(d, 1.0f), e));
}

struct ReluOp {
  template <class D, class V>
  HWY_INLINE V operator()(D d, V x) const { return Relu(d, x); }
};
struct SigmoidOp {
  template <class D, class V>
  HWY_INLINE V operator()(D d, V x) const { return Sigmoid(d, x); }
};
struct TanhOp {
  template <class D, class V>
  HWY_INLINE V operator()(D d, V x) const { return hn::Tanh(d, x); }
};
struct SqrOp {
  template <class D, class V>
  HWY_INLINE V operator()(D, V x) const { return hn::Mul(x, x); }
};
struct SqrtOp {
  template <class D, class V>
  HWY_INLINE V operator()(D, V x) const { return hn::Sqrt(x); }
};

struct GeluTanhOp {
  template <class D, class V>
  HWY_INLINE V operator()(D d, V x) const { return GeluTanh(d, x); }
};
struct GeluErfOp {
  template <class D, class V>
  HWY_INLINE V operator()(D d, V x) const { return GeluErf(d, x); }
};
struct SiluOp {
  template <class D, class V>
  HWY_INLINE V operator()(D d, V x) const { return Silu(d, x); }
};

// y[i] = op(x[i]): full vectors, then single lanes.
template <class D, class Op>
HWY_INLINE void UnaryRow(D d, size_t n, const float* x, float* y, Op op) {
  const size_t N = hn::Lanes(d);
  size_t i = 0;
  for (; i + N <= n; i += N) hn::StoreU(op(d, hn::LoadU(d, x + i)), d, y + i);
  const hn::CappedTag<float, 1> d1;
  for (; i < n; ++i) hn::StoreU(op(d1, hn::LoadU(d1, x + i)), d1, y + i);
}

}  // namespace HWY_NAMESPACE
}  // namespace ggml_cpu
HWY_AFTER_NAMESPACE();

#endif  // GGML_WHISPER_KERNELS_ACTIVATIONS_INL_H_
