// im2col of Whisper's conv stem (kernels/conv.h).
#include "kernels/conv.h"

#include <stddef.h>

#include <string>

#include "absl/strings/str_format.h"

namespace ggml_cpu {
namespace {

constexpr size_t kKernel = 3;

absl::Status Invalid(const char* fn, const std::string& what) {
  return absl::InvalidArgumentError(absl::StrFormat("%s: %s", fn, what));
}

absl::Status CheckShape(const char* fn, const Conv1dShape& s, size_t x_stride, size_t t_begin,
                        size_t t_end) {
  if (s.t_in == 0 || s.cin == 0) {
    return Invalid(fn, absl::StrFormat("empty shape t_in=%zu cin=%zu", s.t_in, s.cin));
  }
  if (s.stride != 1 && s.stride != 2) return Invalid(fn, absl::StrFormat("stride=%zu, expected 1 or 2", s.stride));
  if (x_stride < s.t_in) return Invalid(fn, absl::StrFormat("x_stride=%zu < t_in=%zu", x_stride, s.t_in));
  const size_t t_out = Conv1dPhOutLength(s);
  if (t_begin > t_end || t_end > t_out) {
    return Invalid(fn, absl::StrFormat("t range [%zu, %zu) outside [0, T_out=%zu]", t_begin, t_end, t_out));
  }
  return absl::OkStatus();
}

}  // namespace

size_t Conv1dPhOutLength(const Conv1dShape& s) {
  if (s.t_in == 0 || s.stride == 0) return 0;
  return (s.t_in - 1) / s.stride + 1;
}

absl::Status Im2Col1dPh(const Conv1dShape& s, const float* x, size_t x_stride, size_t t_begin,
                        size_t t_end, float* col) {
  absl::Status st = CheckShape("Im2Col1dPh", s, x_stride, t_begin, t_end);
  if (!st.ok() || t_begin == t_end) return st;
  if (x == nullptr || col == nullptr) return Invalid("Im2Col1dPh", "null x or col");
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
  return st;
}

}  // namespace ggml_cpu
