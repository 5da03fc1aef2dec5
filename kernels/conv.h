// im2col of Whisper's encoder stem convolutions, as ggml_conv_1d_ph (kernel 3, padding 1, stride 1
// or 2) builds them: ggml.c ggml_conv_1d is im2col, then mul_mat; the executor
// (cpu/graph_compute_matmul.cc) runs the mul_mat with kernels/matmul on these columns, which stay
// f32 (ggml makes them f16). Scalar: the copy has no per-target code.
//
//   x: ne = [T_in, Cin]        Cin rows of T_in samples, rows x_stride floats apart (the
//                              log-mel is [3000, 80]; conv2 reads conv1's [T, 384])
//   col row t (ne = [3 * Cin, T_out]): col[t][3 * ci + k] = x[ci][t * stride + k - 1]
//                              (0 outside [0, T_in)), t < T_out = (T_in - 1) / stride + 1
//   so y[co][t] = sum_{ci, k} w[co][ci][k] * col[t][3 * ci + k] for w of ne = [3, Cin, Cout].
//
// Work splitting: a call fills output steps t in [t_begin, t_end), so threads split time.
// Errors (absl::InvalidArgumentError): zero sizes, stride not 1 or 2, t range outside
// [0, T_out], x_stride < T_in, null pointers.
#ifndef GGML_WHISPER_KERNELS_CONV_H_
#define GGML_WHISPER_KERNELS_CONV_H_

#include <stddef.h>

#include "absl/status/status.h"

namespace ggml_cpu {

struct Conv1dShape {
  size_t t_in;    // input frames (ne0 of x)
  size_t cin;     // input channels
  size_t stride;  // 1 or 2
};

// T_out = (T_in + 2 * 1 - 3) / stride + 1 (0 if t_in == 0 or stride == 0).
size_t Conv1dPhOutLength(const Conv1dShape& s);

// col[(t - t_begin) * 3 * Cin + 3 * ci + k] = x[ci][t * stride + k - 1] (0 outside), i.e.
// ggml's im2col rows (ne = [3 * Cin, T_out]) for t in [t_begin, t_end).
absl::Status Im2Col1dPh(const Conv1dShape& s, const float* x, size_t x_stride, size_t t_begin,
                        size_t t_end, float* col);

}  // namespace ggml_cpu

#endif  // GGML_WHISPER_KERNELS_CONV_H_
