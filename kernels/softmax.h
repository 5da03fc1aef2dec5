// Row softmax as ggml_soft_max_ext (scale, optional additive mask row) combined with
// ggml_diag_mask_inf (causal): for each row r of x (ggml ne = [n, nrows]),
//
//   v[i] = scale * x[r][i] + mask_scale * mask[r][i]   (mask term only if mask != null)
//   v[i] = -inf                for i > n_past + r   (only if causal)
//   y[r][i] = exp(v[i] - max_j v[j]) / sum_j exp(v[j] - max_j v[j])
//
// The max is subtracted before exp (Highway contrib Exp), so no input overflows; entries at
// -inf (mask or causal) come out exactly 0. A row whose entries are all -inf comes out all 0
// (ggml would give NaN). A row with a NaN v[i] (a corrupt weight upstream) comes out NaN in its
// first n_past + r + 1 columns (causal) or all n, so that a finiteness check further on sees it
// (it came out 0, as a masked row, and the result stayed finite but wrong). Row r means the absolute row index, so threads can split rows with
// [row_begin, row_end) and still get the causal diagonal right. Strides in elements; y may alias
// x; mask_stride 0 broadcasts one mask row. Dispatched once per call; no allocation.
#ifndef GGML_WHISPER_KERNELS_SOFTMAX_H_
#define GGML_WHISPER_KERNELS_SOFTMAX_H_

#include <stddef.h>

namespace ggml_cpu {

struct SoftmaxParams {
  float scale = 1.0f;            // Whisper encoder: 1/sqrt(d_head)
  const float* mask = nullptr;   // additive, row r at mask + r * mask_stride; n floats per row
  float mask_scale = 1.0f;       // the mask's factor: ALiBi's slope of the row's head (ggml/ops.h)
  size_t mask_stride = 0;
  bool causal = false;           // ggml_diag_mask_inf(n_past): -inf for columns > n_past + r
  size_t n_past = 0;
};

// Rows [row_begin, row_end) of x (stride x_stride) into the same rows of y (stride y_stride).
void SoftmaxRowsF32(size_t n, size_t row_begin, size_t row_end, const float* x, size_t x_stride,
                    float* y, size_t y_stride, const SoftmaxParams& params);

// sum over i < n of exp(double(x[i] - shift)): the difference rounded to f32 first, then exp
// and the sum in f64 (Highway contrib Exp on f64 vectors, 1 ulp). The log-sum-exp of a logits
// row (Whisper's log-softmax over the vocabulary, n_vocab = 51864) is max + log(sum) with shift
// = max. Terms with x[i] - shift < -708 (-inf included) add 0: each is below DBL_MIN, so with
// shift = max (one term is 1) the sum is the same. A NaN x[i] gives NaN. n = 0 gives 0.
double SumExpShifted(const float* x, size_t n, float shift);

}  // namespace ggml_cpu

#endif  // GGML_WHISPER_KERNELS_SOFTMAX_H_
