// Per-row normalization, as ggml_norm (layer norm without affine) and ggml_rms_norm, with an
// optional fused affine step (whisper follows every ggml_norm with * weight + bias).
//
// Rows: x and y hold nrows rows of n floats (ggml ne = [n, nrows]) at strides x_stride and
// y_stride elements; y may alias x. w and b, if given, are one row of n floats each. n == 0 or
// nrows == 0 does nothing. Dispatched once per call (a thread passes its share of rows); no
// allocation.
//
// Precision: sums use f32 vector accumulators (ggml uses a double accumulator; the difference
// is within a few f32 ulps for Whisper's 384..1280-wide rows). The mean and variance are kept in
// float and the scale is 1 / sqrtf(var + eps), as in ggml's ggml_compute_forward_norm_f32.
#ifndef GGML_WHISPER_KERNELS_NORM_H_
#define GGML_WHISPER_KERNELS_NORM_H_

#include <stddef.h>

namespace ggml_cpu {

// y = (x - mean) / sqrtf(var + eps) [* w] [+ b] per row; mean and var (population, / n) from a
// two-pass computation (mean first, then the mean of squared deviations). w, b may be null.
// Whisper: eps = 1e-5.
void LayerNormRowsF32(size_t n, size_t nrows, const float* x, size_t x_stride, float eps,
                      const float* w, const float* b, float* y, size_t y_stride);

// y = x / sqrtf(mean(x^2) + eps) [* w] per row (ggml_rms_norm). w may be null.
void RmsNormRowsF32(size_t n, size_t nrows, const float* x, size_t x_stride, float eps,
                    const float* w, float* y, size_t y_stride);

}  // namespace ggml_cpu

#endif  // GGML_WHISPER_KERNELS_NORM_H_
