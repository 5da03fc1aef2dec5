// 1-D convolution of Whisper's encoder stem, as ggml_conv_1d_ph (kernel 3, padding 1, stride 1
// or 2): im2col into caller scratch, then kernels/matmul (which holds all the SIMD work, so this
// family has no per-target code of its own). The same decomposition as ggml (ggml.c
// ggml_conv_1d: im2col, then mul_mat), except that the columns stay f32 (ggml makes them f16).
//
//   x: ne = [T_in, Cin]        Cin rows of T_in samples, rows x_stride floats apart (the
//                              log-mel is [3000, 80]; conv2 reads conv1's [T, 384])
//   w: ne = [3, Cin, Cout]     w[co][ci][k] at k + 3 * ci + 3 * Cin * co, F32 or F16
//   y[co][t] = sum_{ci < Cin, k < 3} w[co][ci][k] * x[ci][t * stride + k - 1]
//              (x is 0 outside [0, T_in)), t < T_out = (T_in - 1) / stride + 1
//
// Output layouts: kTimeContiguous is ggml's result, ne = [T_out, Cout]; kChannelContiguous is
// ne = [Cout, T_out] (= ggml_cont(ggml_transpose(y)), what Whisper's encoder uses next).
//
// Work splitting: a call computes output steps t in [t_begin, t_end) (every channel), so
// threads split time. Each thread passes its own scratch of Conv1dPhWorkSize(...) bytes.
// Errors (absl::InvalidArgumentError): zero sizes, stride not 1 or 2, t range outside
// [0, T_out], x_stride < T_in, null pointers, scratch too small.
#ifndef GGML_WHISPER_KERNELS_CONV_H_
#define GGML_WHISPER_KERNELS_CONV_H_

#include <stddef.h>

#include "absl/status/status.h"
#include "ggml/fp16.h"

namespace ggml_cpu {

struct Conv1dShape {
  size_t t_in;    // input frames (ne0 of x)
  size_t cin;     // input channels
  size_t cout;    // output channels
  size_t stride;  // 1 or 2
};

enum class Conv1dLayout { kTimeContiguous, kChannelContiguous };

// T_out = (T_in + 2 * 1 - 3) / stride + 1 (0 if t_in == 0 or stride == 0).
size_t Conv1dPhOutLength(const Conv1dShape& s);

// Scratch bytes for a call over t_count output steps with the given weight type and layout.
size_t Conv1dPhWorkSize(const Conv1dShape& s, size_t t_count, bool f16_weights,
                        Conv1dLayout layout);

// col[(t - t_begin) * 3 * Cin + 3 * ci + k] = x[ci][t * stride + k - 1] (0 outside), i.e.
// ggml's im2col rows (ne = [3 * Cin, T_out]) for t in [t_begin, t_end).
absl::Status Im2Col1dPh(const Conv1dShape& s, const float* x, size_t x_stride, size_t t_begin,
                        size_t t_end, float* col);

absl::Status Conv1dPhF32(const Conv1dShape& s, const float* x, size_t x_stride, const float* w,
                         Conv1dLayout layout, float* y, size_t t_begin, size_t t_end, void* work,
                         size_t work_size);
absl::Status Conv1dPhF16(const Conv1dShape& s, const float* x, size_t x_stride,
                         const ggml_fp16_t* w, Conv1dLayout layout, float* y, size_t t_begin,
                         size_t t_end, void* work, size_t work_size);

}  // namespace ggml_cpu

#endif  // GGML_WHISPER_KERNELS_CONV_H_
