// Elementwise activations on f32 rows: GELU (ggml_gelu: tanh approximation; or the exact erf
// form, ggml_gelu_erf), SiLU (ggml_silu), and ReLU, sigmoid, tanh, x^2 and sqrt (the Silero VAD
// graph's). Dispatched once per call; `y` may alias `x`.
// n is the row length (ggml ne[0]); no alignment needed; no allocation.
#ifndef GGML_WHISPER_KERNELS_ACTIVATIONS_H_
#define GGML_WHISPER_KERNELS_ACTIVATIONS_H_

#include <stddef.h>

namespace ggml_cpu {

enum class GeluMode {
  // 0.5 x (1 + tanh(sqrt(2/pi) x (1 + 0.044715 x^2))), with ggml's cut-offs: x <= -10 gives 0,
  // x >= 10 gives x. Whisper's GELU. Evaluated as x / (1 + exp(-2u)) (the same function, free of
  // the cancellation in 1 + tanh(u) for negative x) with Highway's contrib Exp, in f32. ggml's
  // CPU path instead reads an f16 table; we are more accurate than it (max rel. error ~1e-6).
  kTanh,
  // 0.5 x (1 + erf(x / sqrt(2))) = 0.5 x erfc(-x / sqrt(2)), with erfc from the Chebyshev fit
  // of Numerical Recipes in C (2nd ed., section 6.2, "erfcc": relative error < 1.2e-7 for all
  // arguments), so the result keeps relative accuracy even in the far negative tail.
  kErf,
};

// y[i] = GELU(x[i]) for i < n.
void GeluF32(size_t n, const float* x, float* y, GeluMode mode = GeluMode::kTanh);

// y[i] = x[i] / (1 + exp(-x[i])) for i < n (SiLU / swish; max rel. error ~1e-6).
void SiluF32(size_t n, const float* x, float* y);

// y[i] = max(x[i], 0) (NaN stays NaN: the result of Highway's Max is unspecified for NaN, so
// it is selected explicitly).
void ReluF32(size_t n, const float* x, float* y);
// y[i] = 1 / (1 + exp(-x[i])), with -x capped at 88 (max rel. error ~1e-6; 0 below -88).
void SigmoidF32(size_t n, const float* x, float* y);
// y[i] = tanh(x[i]) (Highway's contrib Tanh; max abs. error ~1e-6).
void TanhF32(size_t n, const float* x, float* y);
// y[i] = x[i] * x[i].
void SqrF32(size_t n, const float* x, float* y);
// y[i] = sqrt(x[i]) (correctly rounded; NaN for x < 0).
void SqrtF32(size_t n, const float* x, float* y);

}  // namespace ggml_cpu

#endif  // GGML_WHISPER_KERNELS_ACTIVATIONS_H_
