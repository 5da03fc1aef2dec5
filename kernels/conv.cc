// Whisper's conv stem as im2col + mul_mat (kernels/conv.h).
#include "kernels/conv.h"

#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "absl/strings/str_format.h"
#include "kernels/matmul.h"
#include "kernels/vec.h"

namespace ggml_cpu {
namespace {

constexpr size_t kKernel = 3;
constexpr size_t kAlign = 64;

size_t AlignUp(size_t bytes) { return (bytes + kAlign - 1) & ~(kAlign - 1); }

absl::Status Invalid(const char* fn, const std::string& what) {
  return absl::InvalidArgumentError(absl::StrFormat("%s: %s", fn, what));
}

absl::Status CheckShape(const char* fn, const Conv1dShape& s, size_t x_stride, size_t t_begin,
                        size_t t_end) {
  if (s.t_in == 0 || s.cin == 0 || s.cout == 0) {
    return Invalid(fn, absl::StrFormat("empty shape t_in=%zu cin=%zu cout=%zu", s.t_in, s.cin, s.cout));
  }
  if (s.stride != 1 && s.stride != 2) return Invalid(fn, absl::StrFormat("stride=%zu, expected 1 or 2", s.stride));
  if (x_stride < s.t_in) return Invalid(fn, absl::StrFormat("x_stride=%zu < t_in=%zu", x_stride, s.t_in));
  const size_t t_out = Conv1dPhOutLength(s);
  if (t_begin > t_end || t_end > t_out) {
    return Invalid(fn, absl::StrFormat("t range [%zu, %zu) outside [0, T_out=%zu]", t_begin, t_end, t_out));
  }
  return absl::OkStatus();
}

void Im2ColRows(const Conv1dShape& s, const float* x, size_t x_stride, size_t t_begin,
                size_t t_end, float* col) {
  const size_t row = kKernel * s.cin;
  for (size_t t = t_begin; t < t_end; ++t) {
    float* dst = col + (t - t_begin) * row;
    const ptrdiff_t base = static_cast<ptrdiff_t>(t * s.stride) - 1;  // padding 1
    for (size_t ci = 0; ci < s.cin; ++ci) {
      const float* xc = x + ci * x_stride;
      for (size_t k = 0; k < kKernel; ++k) {
        const ptrdiff_t pos = base + static_cast<ptrdiff_t>(k);
        dst[kKernel * ci + k] = (pos >= 0 && pos < static_cast<ptrdiff_t>(s.t_in)) ? xc[pos] : 0.0f;
      }
    }
  }
}

template <typename TW>
absl::Status Conv1dPh(const char* fn, const Conv1dShape& s, const float* x, size_t x_stride,
                      const TW* w, Conv1dLayout layout, float* y, size_t t_begin, size_t t_end,
                      void* work, size_t work_size) {
  absl::Status st = CheckShape(fn, s, x_stride, t_begin, t_end);
  if (!st.ok() || t_begin == t_end) return st;
  if (x == nullptr || w == nullptr || y == nullptr) return Invalid(fn, "null x, w or y");
  constexpr bool kF16 = sizeof(TW) == 2;
  const size_t need = Conv1dPhWorkSize(s, t_end - t_begin, kF16, layout);
  if (work == nullptr || work_size < need) {
    return Invalid(fn, absl::StrFormat("work_size=%zu < Conv1dPhWorkSize()=%zu", work_size, need));
  }
  const size_t K = kKernel * s.cin, t_count = t_end - t_begin, t_out = Conv1dPhOutLength(s);
  char* p = reinterpret_cast<char*>(AlignUp(reinterpret_cast<uintptr_t>(work)));
  float* col = reinterpret_cast<float*>(p);
  p += AlignUp(t_count * K * sizeof(float));
  Im2ColRows(s, x, x_stride, t_begin, t_end, col);
  if (layout == Conv1dLayout::kChannelContiguous) {
    // a = w (Cout rows of K), b = columns (t rows): c[t][co] = y[t * Cout + co].
    float* c = y + t_begin * s.cout;
    if constexpr (kF16) {
      return MulMatF16(K, w, K, col, K, c, s.cout, 0, s.cout, 0, t_count, p, MulMatWorkSize());
    } else {
      return MulMatF32(K, w, K, col, K, c, s.cout, 0, s.cout, 0, t_count, p, MulMatWorkSize());
    }
  }
  // kTimeContiguous: a = columns (t rows), b = w in f32 (Cout rows): c[co][t] = y[co * T_out + t].
  const float* wf;
  if constexpr (kF16) {
    float* conv = reinterpret_cast<float*>(p);
    ConvertF16ToF32(s.cout * K, w, conv);
    p += AlignUp(s.cout * K * sizeof(float));
    wf = conv;
  } else {
    wf = w;
  }
  // Column row m is output step t_begin + m, so c starts t_begin floats into each y row.
  return MulMatF32(K, col, K, wf, K, y + t_begin, t_out, 0, t_count, 0, s.cout, p,
                   MulMatWorkSize());
}

}  // namespace

size_t Conv1dPhOutLength(const Conv1dShape& s) {
  if (s.t_in == 0 || s.stride == 0) return 0;
  return (s.t_in - 1) / s.stride + 1;
}

size_t Conv1dPhWorkSize(const Conv1dShape& s, size_t t_count, bool f16_weights,
                        Conv1dLayout layout) {
  const size_t K = kKernel * s.cin;
  size_t bytes = kAlign + AlignUp(t_count * K * sizeof(float)) + MulMatWorkSize();
  if (f16_weights && layout == Conv1dLayout::kTimeContiguous) bytes += AlignUp(s.cout * K * sizeof(float));
  return bytes;
}

absl::Status Im2Col1dPh(const Conv1dShape& s, const float* x, size_t x_stride, size_t t_begin,
                        size_t t_end, float* col) {
  absl::Status st = CheckShape("Im2Col1dPh", s, x_stride, t_begin, t_end);
  if (!st.ok() || t_begin == t_end) return st;
  if (x == nullptr || col == nullptr) return Invalid("Im2Col1dPh", "null x or col");
  Im2ColRows(s, x, x_stride, t_begin, t_end, col);
  return st;
}

absl::Status Conv1dPhF32(const Conv1dShape& s, const float* x, size_t x_stride, const float* w,
                         Conv1dLayout layout, float* y, size_t t_begin, size_t t_end, void* work,
                         size_t work_size) {
  return Conv1dPh("Conv1dPhF32", s, x, x_stride, w, layout, y, t_begin, t_end, work, work_size);
}

absl::Status Conv1dPhF16(const Conv1dShape& s, const float* x, size_t x_stride,
                         const ggml_fp16_t* w, Conv1dLayout layout, float* y, size_t t_begin,
                         size_t t_end, void* work, size_t work_size) {
  return Conv1dPh("Conv1dPhF16", s, x, x_stride, w, layout, y, t_begin, t_end, work, work_size);
}

}  // namespace ggml_cpu
